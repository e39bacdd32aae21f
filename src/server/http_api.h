// The routes of `r1pi --serve` on a cpp-httplib server: OpenAI's /v1/chat/completions,
// /v1/completions and /v1/models, /health, /metrics, /tokenize, /detokenize and the chat page
// at /. Completions are queued for the engine (JobQueue); everything else is answered here.
#pragma once
#include <httplib.h>

#include "chat/chat_template.h"
#include "server/job_queue.h"
#include "server/metrics.h"
#include "server/serve_options.h"

namespace r1pi {

struct ApiContext {
  const Tokenizer& tokenizer;
  const ServeOptions& options;
  ChatTemplate chat_template;
  SamplerParams default_sampler;
  int n_ctx;
  JobQueue& queue;
  Metrics& metrics;
};

// Routes, limits (body size, timeouts), the API key check and OpenAI-shaped errors.
void add_api_routes(httplib::Server& http, const ApiContext& context);

}  // namespace r1pi
