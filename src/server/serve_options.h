// `r1pi --serve`'s options.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "chat/chat_options.h"

namespace r1pi {

// --cache-scope: which requests may start from a prefix another request left in a slot's cache.
// A shared prefix shows in cached_tokens and timings.cache_n, so sharing tells one client how much
// of a guessed prompt another sent: User shares only between requests with the same `user`
// field (Anthropic's metadata.user_id); Shared lets every request use every prefix (one user, or
// clients that trust each other: the most reuse).
enum class CacheScope { User, Shared };

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                       // 0: any free port (printed when listening)
  std::string api_key;                   // empty: no key asked
  bool split_reasoning = true;           // --reasoning-format deepseek (none: all text is content)
  CacheScope cache_scope = CacheScope::User;
  int queue_size = 32;                   // requests waiting or running; one more gets 503
  int parallel_chunk = 8;                // --parallel: a prompt's tokens per forward beside others
  size_t max_body_bytes = 1 << 20;       // a larger request body gets 413
  size_t max_connections_per_address = 32;  // one more from the same client address gets 503
  int read_timeout_seconds = 30;         // for a request's headers and body
  std::string model_name;                // the id /v1/models shows
  std::string model_path;                // the GGUF file /props shows (empty: model_name)
  std::string build_info;                // /props' build_info (empty: left out)
  // Where the line per answered request goes (http_api.cpp: "serve: METHOD ROUTE STATUS ..."),
  // without its newline; empty: stderr. Called from the HTTP threads, one line at a time.
  std::function<void(const std::string& line)> log;
  ChatOptions chat;                      // template and default sampling
};

}  // namespace r1pi
