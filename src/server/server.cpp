#include "server/server.h"

#include <csignal>
#include <cstdio>
#include <thread>

#include "chat/completion.h"
#include "common/error.h"
#include "server/http_api.h"

namespace r1pi {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

CompletionSettings settings_for(const Job& job, const ApiContext& c) {
  const ApiRequest& r = job.request;
  CompletionSettings s;
  s.generation = c.options.chat.generation;
  // The command line's -n is the default max_tokens.
  const int max_tokens = r.max_tokens > 0 ? r.max_tokens : c.options.chat.generation.n_predict;
  s.generation.n_predict = n_predict_within(max_tokens, job.prompt.size(), c.n_ctx);
  s.generation.sampler = r.sampler;
  s.stop = r.stop;
  if (r.endpoint == Endpoint::Chat) {
    const std::vector<std::string> ends = turn_end_strings(c.chat_template);
    s.stop.insert(s.stop.end(), ends.begin(), ends.end());
    s.reasoning = c.options.split_reasoning ? answer_start(c.chat_template) : ReasoningStart::None;
  }
  return s;
}

void generate_job(TokenSource& source, Job& job, const ApiContext& c, const std::function<bool()>& stop) {
  CompletionSettings s = settings_for(job, c);
  s.cancelled = [&] { return job.abandoned() || stop(); };
  try {
    Completion done = complete(source, c.tokenizer, job.prompt, s, [&](const TextParts& parts) { job.add(parts); });
    c.metrics.completed(done);
    job.finish(std::move(done));
  } catch (const Error& e) {
    job.fail(e.what());
  }
}

}  // namespace

void serve_until(TokenSource& source, const Tokenizer& tokenizer, const ServeOptions& options,
                 const std::function<bool()>& stop, const std::function<void(int port)>& on_listening) {
  const ChatTemplate chat_template = chosen_template(options.chat, tokenizer);
  JobQueue queue(size_t(options.queue_size));
  Metrics metrics;
  const ApiContext context{tokenizer, options, chat_template, chat_sampler(options.chat, chat_template),
                           source.n_ctx(), queue, metrics};
  HttpServer http(http_limits(options));
  add_api_routes(http, context);
  const int port = http.bind(options.host, options.port);
  if (port < 0)
    throw Error("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                " (in use, or not an address of this machine)");
  std::thread listener([&] { http.run(); });
  std::fprintf(stderr, "serve: listening on http://%s:%d (template %s, queue %d, model %s)\n",
               options.host.c_str(), port, chat_template_name(chat_template).c_str(), options.queue_size,
               options.model_name.c_str());
  if (on_listening) on_listening(port);

  uint64_t served = 0;
  while (!stop()) {
    std::shared_ptr<Job> job = queue.pop(std::chrono::milliseconds(100));
    if (!job) continue;
    job->served = ++served;
    // A client that left while it waited: nothing to generate, but its HTTP thread still waits.
    if (job->abandoned()) job->fail("the client went away before its turn");
    else generate_job(source, *job, context, stop);
    queue.done_with_one();
  }
  for (const std::shared_ptr<Job>& waiting : queue.close()) waiting->fail("the server is shutting down");
  http.stop();
  listener.join();
  std::fprintf(stderr, "serve: stopped\n");
}

int run_server(TokenSource& source, const Tokenizer& tokenizer, const ServeOptions& options) {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a client that went away is a failed write, not the end of the server
  serve_until(source, tokenizer, options, [] { return g_stop_signal != 0; });
  return 0;
}

}  // namespace r1pi
