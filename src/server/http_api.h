// The routes of `r1pi --serve` on its HTTP layer (http_server.h): OpenAI's /v1/chat/completions,
// /v1/completions and /v1/models, /health, /metrics, /tokenize, /detokenize and the chat page
// at /. Completions are queued for the engine (JobQueue); everything else is answered here.
#pragma once
#include "chat/chat_format.h"
#include "chat/chat_template.h"
#include "server/job_queue.h"
#include "server/metrics.h"
#include "server/http_server.h"
#include "server/forward_batcher.h"
#include "server/serve_options.h"
#include "server/slot_table.h"

namespace r1pi {

struct ApiContext {
  const Tokenizer& tokenizer;
  const ServeOptions& options;
  ChatTemplate chat_template;
  const ChatFormat& format;      // the prompt's template and the tool-call syntax
  SamplerParams default_sampler;
  int n_ctx;
  JobQueue& queue;
  Metrics& metrics;
  SlotTable& slots;
  std::function<ForwardBatcher::Stats()> batches;  // the engine's batches so far (/metrics)
};

// The server's limits (body size, timeouts, workers) from its options.
HttpLimits http_limits(const ServeOptions& options);

// Routes, the worker pool, the API key check and OpenAI-shaped errors.
void add_api_routes(HttpServer& http, const ApiContext& context);

}  // namespace r1pi
