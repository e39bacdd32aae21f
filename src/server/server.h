// `r1pi --serve`: the HTTP threads take requests and queue them; the calling thread (rank 0's
// main thread, the only one that talks MPI) starts them in arrival order in the source's slots
// (--parallel: one per KV cache sequence) and runs the forwards of all running requests together
// (forward_batcher.h), each through its slot's prompt cache.
#pragma once
#include <functional>

#include "runtime/token_source.h"
#include "server/serve_options.h"

namespace r1pi {

// Listens on options.host:options.port (throws r1pi::Error when it cannot) and serves until
// stop() returns true (asked every tenth of a second and before every token); then answers the
// waiting requests and returns. on_listening gets the port (the one chosen with options.port 0).
void serve_until(TokenSource& source, const Tokenizer& tokenizer, const ServeOptions& options,
                 const std::function<bool()>& stop, const std::function<void(int port)>& on_listening = {});

// serve_until a SIGINT or SIGTERM; returns the exit code.
int run_server(TokenSource& source, const Tokenizer& tokenizer, const ServeOptions& options);

}  // namespace r1pi
