#include "server/server.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "chat/completion.h"
#include "common/error.h"
#include "server/forward_batcher.h"
#include "server/http_api.h"
#include "server/slot_table.h"

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
  s.generation.ignore_eos = r.ignore_eos;
  s.generation.constraint = job.constraint;
  s.stop = r.stop;
  if (r.endpoint == Endpoint::Chat) {
    const std::vector<std::string> ends = turn_end_strings(c.chat_template);
    s.stop.insert(s.stop.end(), ends.begin(), ends.end());
    s.reasoning = c.options.split_reasoning ? answer_start(c.chat_template) : ReasoningStart::None;
  }
  return s;
}

// may_draft: whether --spec drafts at this step (a request alone does; beside others it decodes
// plainly: measured in docs/server.md).
void generate_job(TokenSource& source, Job& job, const ApiContext& c, const std::function<bool()>& stop, int slot,
                  const std::function<bool()>& may_draft) {
  CompletionSettings s = settings_for(job, c);
  s.generation.seq = slot;
  s.generation.may_draft = may_draft;
  s.generation.on_token = [&] { c.slots.generated(slot); };
  s.cancelled = [&] { return job.abandoned() || stop(); };
  if (job.request.sampler.n_probs >= 0) s.on_logprobs = [&](const PickLogprobs& p) { job.add_logprobs(p); };
  try {
    Completion done = complete(source, c.tokenizer, job.prompt, s, [&](const TextParts& parts) { job.add(parts); });
    c.metrics.completed(done);
    // Cut by the server stopping, not by its client (gone, then): an error, whole or streamed, so
    // that the client knows the answer is not all there.
    if (done.finish_reason == "cancelled" && !job.cancelled)
      job.fail("the server is shutting down: the answer was cut after " + std::to_string(done.completion_tokens()) +
               " tokens");
    else
      job.finish(std::move(done));
  } catch (const Error& e) {
    job.fail(e.what());
  } catch (const std::exception& e) {  // out of memory: this request fails, the server goes on
    job.fail(std::string("the generation failed: ") + e.what());
  }
}

// A request being generated in a slot, on its own thread.
struct Running {
  std::shared_ptr<Job> job;
  std::thread thread;
  std::atomic<bool> finished{false};
};

}  // namespace

void serve_until(TokenSource& source, const Tokenizer& tokenizer, const ServeOptions& options,
                 const std::function<bool()>& stop, const std::function<void(int port)>& on_listening) {
  const ChatFormat format = chat_format_for(options.chat, tokenizer);
  const ChatTemplate chat_template = format.family;
  const int n_slots = source.n_seqs();
  JobQueue queue(size_t(options.queue_size));
  Metrics metrics;
  SlotTable slots(n_slots);
  ForwardBatcher batcher(source);
  const ApiContext context{tokenizer, options, chat_template, format, chat_sampler(options.chat, chat_template),
                           source.n_ctx(), queue, metrics, slots, [&batcher] { return batcher.stats(); }};
  HttpServer http(http_limits(options));
  add_api_routes(http, context);
  const int port = http.bind(options.host, options.port);
  if (port < 0)
    throw Error("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                " (in use, or not an address of this machine)");
  std::thread listener([&] { http.run(); });
  std::fprintf(stderr, "serve: listening on http://%s:%d (template %s, %d slot%s of %d tokens, queue %d, model %s)\n",
               options.host.c_str(), port, format.origin.c_str(), n_slots,
               n_slots > 1 ? "s" : "", source.n_ctx(), options.queue_size, options.model_name.c_str());
  if (on_listening) on_listening(port);

  std::vector<std::unique_ptr<Running>> running(static_cast<size_t>(n_slots));
  // Whose prefixes each slot's cache holds (--cache-scope): another scope's count as nothing.
  std::vector<std::string> slot_scope(static_cast<size_t>(n_slots));
  const std::vector<int32_t> nothing;
  // Frees the slots whose generation ended (the engine's thread: the caches are still then); all:
  // every slot, once no generation is a member of the batches any more (each thread's last steps
  // after leaving are short, and it must be joined before it is destroyed).
  auto reap = [&](bool all) {
    for (int i = 0; i < n_slots; ++i) {
      std::unique_ptr<Running>& r = running[size_t(i)];
      if (!r || (!all && !r->finished)) continue;
      r->thread.join();
      slots.finish(i, int(source.cached(i).size()));
      r.reset();
      queue.done_with_one();
    }
  };
  // Starts a request in the free slot that holds the longest beginning of its prompt (copied
  // there from another slot when that one holds more); false when every slot is busy.
  uint64_t served = 0;
  auto admit = [&](const std::shared_ptr<Job>& job) {
    job->served = ++served;
    // A client that left while it waited: nothing to generate, but its HTTP thread still waits.
    if (job->abandoned()) {
      job->fail("the client went away before its turn");
      queue.done_with_one();
      return;
    }
    const std::string scope = options.cache_scope == CacheScope::Shared ? "" : job->request.user;
    std::vector<const std::vector<int32_t>*> held;
    std::vector<bool> free;
    bool own_free = false;  // a free slot that is empty or holds this scope's prefixes
    for (int i = 0; i < n_slots; ++i) {
      const bool own = slot_scope[size_t(i)] == scope || source.cached(i).empty();
      held.push_back(slot_scope[size_t(i)] == scope ? &source.cached(i) : &nothing);
      free.push_back(!running[size_t(i)]);
      own_free = own_free || (own && free.back());
    }
    // Another scope's slot is wiped before use: taken only when no other is free.
    if (own_free)
      for (int i = 0; i < n_slots; ++i)
        if (slot_scope[size_t(i)] != scope && !source.cached(i).empty()) free[size_t(i)] = false;
    int copy_from = -1;
    const int slot =
        choose_slot(held, free, job->prompt, copy_from, [&](int i, int n) { return source.resumable(i, n); });
    if (slot_scope[size_t(slot)] != scope) source.truncate(slot, 0);
    slot_scope[size_t(slot)] = scope;
    if (copy_from >= 0) source.copy(copy_from, slot);
    slots.start(slot, job->ticket, int(job->prompt.size()));
    auto r = std::make_unique<Running>();
    r->job = job;
    batcher.join();  // before the thread exists: the next batch waits for its first call
    Running* raw = r.get();
    r->thread = std::thread([&, raw, slot] {
      SlotSource slot_source(batcher, source, options.parallel_chunk);
      generate_job(slot_source, *raw->job, context, stop, slot, [&batcher] { return batcher.members() <= 1; });
      batcher.leave();
      raw->finished = true;
    });
    running[size_t(slot)] = std::move(r);
  };

  while (!stop()) {
    reap(false);
    const bool slot_free = std::any_of(running.begin(), running.end(), [](const auto& r) { return !r; });
    const bool idle = batcher.members() == 0;
    if (slot_free) {
      // Idle: wait here for a request; busy: take what is waiting and go on with the batch.
      if (std::shared_ptr<Job> job = queue.pop(std::chrono::milliseconds(idle ? 100 : 0))) {
        admit(job);
        continue;
      }
    }
    if (!idle) batcher.run(std::chrono::milliseconds(100));
    else if (!slot_free) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Stopping: each generation ends at its next token (stop() is in its cancelled), through the batches.
  while (batcher.members() > 0) batcher.run(std::chrono::milliseconds(100));
  reap(true);
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
