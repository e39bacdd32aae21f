#include "server/http_api.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>
#include <memory>
#include <mutex>

#include "common/error.h"
#include "server/api_error.h"
#include "server/api_key.h"
#include "server/api_response.h"
#include "server/chat_page.h"
#include "server/client_connection.h"
#include "server/logprobs_json.h"
#include "server/anthropic_request.h"
#include "server/anthropic_response.h"
#include "server/status_documents.h"
#include "server/completion_jobs.h"

namespace r1pi {

namespace {

using nlohmann::json;

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(json_text(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) { send_json(res, e.status, error_body(e)); }

// What the line per request (log_line) says of a completion besides the HTTP side: its tokens
// and ids. The handler and its stream fill it in on the worker thread that answers the request,
// the thread on which the layer then calls the logger (http_server.h); each request starts with a
// clear one (pre-routing), and the logger clears it after its line.
struct RequestNote {
  long prompt = -1, generated = -1;  // -1: not known (yet)
  std::string id;                    // "chatcmpl-..." / "cmpl-..."
  uint64_t ticket = 0;               // its arrival order (Job::ticket), 0: not queued
};
thread_local RequestNote t_note;

void note_completion(const Completion& c) {
  t_note.prompt = c.prompt_tokens;
  t_note.generated = c.completion_tokens();
}

// Request bytes as they may appear in one log line: no control characters or spaces (a path is
// the client's to choose), at most max bytes.
std::string printable(const std::string& s, size_t max) {
  if (s.empty()) return "-";
  std::string out = s.substr(0, max);
  for (char& ch : out)
    if (static_cast<unsigned char>(ch) <= 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
  if (s.size() > max) out += "...";
  return out;
}

// "serve: POST /v1/chat/completions 200 prompt 12 gen 64 1834 ms id chatcmpl-... ticket 3";
// "-" in place of the tokens for a request that made no completion (and "gen -" for one that
// has its prompt but no answer: queue full, cancelled, failed).
std::string log_line(const httplib::Request& req, const httplib::Response& res, std::chrono::milliseconds elapsed,
                     const RequestNote& n) {
  // (Appended piece by piece: gcc 12 warns, wrongly, of "literal" + std::string temporaries here.)
  std::string line = "serve: ";
  line.append(printable(req.method, 16)).append(" ").append(printable(req.path, 256));
  line.append(" ").append(std::to_string(res.status));
  if (n.prompt >= 0) {
    line.append(" prompt ").append(std::to_string(n.prompt));
    line.append(" gen ").append(n.generated >= 0 ? std::to_string(n.generated) : "-");
  } else {
    line.append(" -");
  }
  line.append(" ").append(std::to_string(elapsed.count())).append(" ms");
  if (!n.id.empty()) line.append(" id ").append(n.id);
  if (n.ticket > 0) line.append(" ticket ").append(std::to_string(n.ticket));
  return line;
}

// The job's place in the queue, known once the engine took it.
ResponseId with_order(ResponseId id, const Job& job) {
  id.ticket = job.ticket;
  id.served = job.served;
  return id;
}

// Waits for the whole answer (a request that did not ask to stream). The engine watches the
// connection meanwhile: a client that leaves ends its job before the next token (or before it
// starts), and the answer then goes nowhere; /metrics counts it as 499 (nginx's "client closed
// request"), not as served or as a server error.
// The choice's logprobs for these tokens (null when the request did not ask); offset: the answer's
// bytes before them (a completion's text_offset).
json logprobs_of(const Tokenizer& t, const ApiRequest& r, const std::vector<PickLogprobs>& picks, size_t offset = 0) {
  if (r.sampler.n_probs < 0) return nullptr;
  return r.endpoint == Endpoint::Chat ? chat_logprobs_json(t, picks) : completion_logprobs_json(t, picks, offset);
}

void answer_whole(httplib::Response& res, const std::shared_ptr<Job>& job, const ResponseId& id, const Tokenizer& t,
                  const ToolCallFormat& format) {
  for (;;) {
    Job::News news = job->wait();
    if (job->cancelled) return send_error(res, ApiError(499, "the client closed the connection"));
    if (!news.error.empty()) return send_error(res, ApiError(500, news.error, "server_error"));
    if (news.completion) {
      note_completion(*news.completion);
      const Completion& c = *news.completion;
      std::optional<ParsedOutput> calls;
      if (offers_tools(job->request)) calls = parse_tool_calls(format, c.text.content, {}, job->request.tools);
      return send_json(res, 200, response_json(job->request, with_order(id, *job), c, logprobs_of(t, job->request, c.logprobs),
                                               calls ? &*calls : nullptr));
    }
  }
}

// Server-sent events as the text comes. A client that goes away is seen by the engine before its
// next token (the job watches the connection); a write that fails, or events that could not all be
// sent (the connection ended before the first), cancel the job as well.
void answer_streamed(httplib::Response& res, const std::shared_ptr<Job>& job, const ResponseId& id,
                     const Tokenizer& t, const ToolCallFormat& format) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [job, id, &t, format](size_t, httplib::DataSink& sink) {
    auto send = [&](const std::string& event) {
      if (sink.write(event.data(), event.size())) return true;
      job->cancelled = true;
      return false;
    };
    const ApiRequest& r = job->request;
    if (r.endpoint == Endpoint::Chat && !send(sse_event(role_chunk_json(id)))) return false;
    size_t sent_bytes = 0;  // the answer's so far (a completion's logprobs count offsets in it)
    std::optional<ToolCallStream> calls;
    bool called = false;
    if (offers_tools(r)) calls.emplace(format, CallIdGenerator{}, r.tools);
    for (;;) {
      Job::News news = job->wait();
      // The tokens' logprobs go with the first piece of text after them (or alone, before the end).
      json logprobs = news.logprobs.empty() ? json() : logprobs_of(t, r, news.logprobs, sent_bytes);
      for (const PickLogprobs& p : news.logprobs) sent_bytes += t.token_bytes(p.chosen.id).size();
      for (const TextParts& piece : news.pieces) {
        if (calls) {
          // The content goes through the tool-call reader: text, or a call's pieces.
          if (!piece.reasoning.empty() && !send(sse_event(chunk_json(r, id, {piece.reasoning, ""}, nullptr, logprobs))))
            return false;
          for (const ToolCallDelta& d : calls->push(piece.content)) {
            called = called || d.kind == ToolCallDelta::Kind::CallStart;
            if (!send(sse_event(delta_chunk_json(r, id, openai_delta(d), nullptr, logprobs)))) return false;
            logprobs = nullptr;
          }
          if (!piece.reasoning.empty()) logprobs = nullptr;
          continue;
        }
        if (!send(sse_event(chunk_json(r, id, piece, nullptr, logprobs)))) return false;
        logprobs = nullptr;
      }
      if (!logprobs.is_null() && !send(sse_event(chunk_json(r, id, {}, nullptr, logprobs)))) return false;
      if (!news.error.empty()) {
        send(sse_event(error_body(news.error, "server_error", "")));
        break;
      }
      if (news.completion) {
        const Completion& c = *news.completion;
        note_completion(c);
        if (calls)
          for (const ToolCallDelta& d : calls->finish()) {
            called = called || d.kind == ToolCallDelta::Kind::CallStart;
            if (!send(sse_event(delta_chunk_json(r, id, openai_delta(d))))) return false;
          }
        const char* finish = called ? "tool_calls" : c.finish_reason == "length" ? "length" : "stop";
        if (!send(sse_event(chunk_json(r, id, {}, finish)))) return false;
        if (r.include_usage && !send(sse_event(usage_chunk_json(r, with_order(id, *job), c)))) return false;
        break;
      }
    }
    if (!send("data: [DONE]\n\n")) return false;
    sink.done();
    return true;
  }, [job](bool sent) {
    if (!sent) job->cancelled = true;
  });
}

// The request's job, queued (503 when the queue is full).
std::shared_ptr<Job> queue_job(const ApiContext& c, const ApiRequest& request, httplib::Response& res) {
  auto job = make_job(c, request, ClientConnection(HttpServer::current_socket()));
  t_note.prompt = long(job->prompt.size());
  if (!c.queue.push(job)) {
    res.set_header("Retry-After", "1");
    throw ApiError(503, "the server is busy: " + std::to_string(c.options.queue_size) + " requests are queued",
                   "server_error", "queue_full");
  }
  return job;
}

void handle_completion(const ApiContext& c, Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  const ApiRequest request = parse_api_request(endpoint, req.body, c.default_sampler);
  auto job = queue_job(c, request, res);
  const ResponseId id = new_response_id(endpoint, c.options.model_name);
  t_note.id = id.id;
  t_note.ticket = job->ticket;
  if (request.stream) answer_streamed(res, job, id, c.tokenizer, c.format.tool_calls);
  else answer_whole(res, job, id, c.tokenizer, c.format.tool_calls);
}

// ---- Anthropic's Messages API: the same jobs, answered in its shapes ----

void answer_message_whole(httplib::Response& res, const std::shared_ptr<Job>& job, const ResponseId& id,
                          const ToolCallFormat& format) {
  for (;;) {
    Job::News news = job->wait();
    if (job->cancelled) throw ApiError(499, "the client closed the connection");
    if (!news.error.empty()) throw ApiError(500, news.error, "server_error");
    if (!news.completion) continue;
    Completion c = *news.completion;
    note_completion(c);
    AnthropicEnding ending;
    if (offers_tools(job->request)) {
      ParsedOutput parsed = parse_tool_calls(format, c.text.content, {}, job->request.tools);
      c.text.content = parsed.content;
      ending.tool_calls = std::move(parsed.tool_calls);
    }
    res.status = 200;
    res.set_content(json_text(anthropic_message_json(with_order(id, *job), c, ending)), "application/json");
    return;
  }
}

void answer_message_streamed(httplib::Response& res, const std::shared_ptr<Job>& job, const ResponseId& id,
                             const ToolCallFormat& format) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [job, id, format](size_t, httplib::DataSink& sink) {
    auto send = [&](const std::string& events) {
      if (events.empty() || sink.write(events.data(), events.size())) return true;
      job->cancelled = true;
      return false;
    };
    AnthropicStream stream(id, int(job->prompt.size()));
    std::optional<ToolCallStream> calls;
    if (offers_tools(job->request)) calls.emplace(format, CallIdGenerator{}, job->request.tools);
    ParsedOutput parsed;
    // The answer's text through the tool-call reader: its content deltas stream as text, the calls
    // come whole at the end (tool_use blocks).
    auto text_of = [&](const std::vector<ToolCallDelta>& deltas) {
      std::string text;
      for (const ToolCallDelta& d : deltas) {
        apply_delta(parsed, d);
        if (d.kind == ToolCallDelta::Kind::Content) text += d.text;
      }
      return text;
    };
    if (!send(stream.start())) return false;
    for (;;) {
      Job::News news = job->wait();
      for (TextParts piece : news.pieces) {
        if (calls) piece.content = text_of(calls->push(piece.content));
        if (!send(stream.push(piece))) return false;
      }
      if (!news.error.empty()) {
        send(AnthropicStream::error(ApiError(500, news.error, "server_error")));
        break;
      }
      if (news.completion) {
        const Completion& c = *news.completion;
        note_completion(c);
        if (calls && !send(stream.push({"", text_of(calls->finish())}))) return false;
        AnthropicEnding ending;
        ending.tool_calls = parsed.tool_calls;
        try {
          if (!send(stream.finish(c, ending))) return false;
        } catch (const ApiError& e) {
          send(AnthropicStream::error(e));
        }
        break;
      }
    }
    sink.done();
    return true;
  }, [job](bool sent) {
    if (!sent) job->cancelled = true;
  });
}

void handle_messages(const ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const ApiRequest request = parse_anthropic_request(AnthropicRoute::Messages, req.body, c.default_sampler);
  auto job = queue_job(c, request, res);
  const ResponseId id = new_message_id(c.options.model_name);
  t_note.id = id.id;
  t_note.ticket = job->ticket;
  if (request.stream) answer_message_streamed(res, job, id, c.format.tool_calls);
  else answer_message_whole(res, job, id, c.format.tool_calls);
}

void handle_count_tokens(const ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const ApiRequest request = parse_anthropic_request(AnthropicRoute::CountTokens, req.body, c.default_sampler);
  res.set_content(json_text(count_tokens_json(prompt_of(c, request).size())), "application/json");
}

// POST /apply-template: the prompt a chat request renders to, as llama-server's route answers.
void handle_apply_template(const ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const ApiRequest request = parse_api_request(Endpoint::Chat, req.body, c.default_sampler);
  send_json(res, 200, {{"prompt", rendered_prompt(c, request)}});
}

json body_object(const httplib::Request& req) {
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) throw ApiError(400, "the body must be a JSON object");
  return body;
}

void handle_tokenize(const ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const json body = body_object(req);
  if (!body.contains("content") || !body["content"].is_string()) throw ApiError(400, "'content' must be a string");
  if (body.contains("add_special") && !body["add_special"].is_boolean())
    throw ApiError(400, "'add_special' must be true or false");
  const bool add_special = body.value("add_special", false);
  const std::vector<int32_t> ids =
      c.tokenizer.encode(body["content"].get<std::string>(), add_special && c.tokenizer.add_bos(), true);
  send_json(res, 200, {{"tokens", ids}});
}

void handle_detokenize(const ApiContext& c, const httplib::Request& req, httplib::Response& res) {
  const json body = body_object(req);
  if (!body.contains("tokens") || !body["tokens"].is_array()) throw ApiError(400, "'tokens' must be a list of token ids");
  std::vector<int32_t> ids;
  for (const json& t : body["tokens"]) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= c.tokenizer.n_vocab())
      throw ApiError(400, "'tokens' holds " + t.dump() + ", not an id of this vocabulary (0 to " +
                              std::to_string(c.tokenizer.n_vocab() - 1) + ")");
    ids.push_back(t.get<int32_t>());
  }
  send_json(res, 200, {{"content", c.tokenizer.decode(ids)}});
}

// The tab icon (/favicon.svg, and /favicon.ico for browsers that ask for it unbidden): a white pi
// on the page header's slate blue, hand-written, 16 units square.
constexpr const char* kFavicon =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">"
    "<rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#2d3a4a\"/>"
    "<path d=\"M3 5h10M6 5v7M10 5v5.5q0 1.5 1.5 1.5\" stroke=\"#fff\" stroke-width=\"2\" fill=\"none\"/>"
    "</svg>";

// Runs an Anthropic route's handler, turning what it throws into Anthropic's error shape.
HttpServer::Handler guarded_anthropic(std::function<void(const httplib::Request&, httplib::Response&)> handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    auto fail = [&](const ApiError& e) {
      res.status = e.status;
      res.set_content(json_text(anthropic_error_body(e)), "application/json");
    };
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      fail(e);
    } catch (const Error& e) {
      fail(ApiError(400, e.what()));
    } catch (const std::exception& e) {
      fail(ApiError(500, e.what(), "server_error"));
    }
  };
}

// Runs a handler, turning what it throws into OpenAI's error shape.
HttpServer::Handler guarded(std::function<void(const httplib::Request&, httplib::Response&)> handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      send_error(res, e);
    } catch (const Error& e) {
      send_error(res, ApiError(400, e.what()));
    } catch (const std::exception& e) {
      send_error(res, ApiError(500, e.what(), "server_error"));
    }
  };
}

// The worker pool with its threads at the lowest priority (nice 19, Linux threads have their
// own): they parse requests and write each streamed token, little work, but on a board whose
// cores all compute, a connection thread woken per token at normal priority takes a core from
// the compute threads in the middle of a forward, and every thread of that forward then waits
// for the one it displaced (bench/server/api_vs_cli.py, bench/results/2026-12-02-vm). At the lowest priority they run
// in the gaps between forwards, when the compute threads sleep.
class BackgroundThreadPool : public httplib::TaskQueue {
 public:
  explicit BackgroundThreadPool(size_t n) : pool_(n) {}
  void enqueue(std::function<void()> fn) override {
    pool_.enqueue([fn = std::move(fn)] {
      thread_local const bool lowered = setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 19) == 0;
      (void)lowered;
      fn();
    });
  }
  void shutdown() override { pool_.shutdown(); }

 private:
  httplib::ThreadPool pool_;
};

}  // namespace

HttpLimits http_limits(const ServeOptions& options) {
  HttpLimits l;
  l.max_body_bytes = options.max_body_bytes;
  l.max_connections_per_address = options.max_connections_per_address;
  l.read_timeout_seconds = options.read_timeout_seconds;
  l.write_timeout_seconds = options.read_timeout_seconds;
  // A worker per queued request (each holds one while it waits), and 8 for everything else.
  l.workers = size_t(options.queue_size) + 8;
  return l;
}

void add_api_routes(HttpServer& http, const ApiContext& c) {
  http.set_worker_pool([](size_t n) { return std::make_unique<BackgroundThreadPool>(n); });
  http.set_pre_routing([&c](const httplib::Request& req, httplib::Response& res) {
    t_note = RequestNote{};
    // The page, its icon (a browser asks for it without the key) and /health need no key.
    if (c.options.api_key.empty() || req.path == "/" || req.path == "/health" || req.path == "/favicon.ico" ||
        req.path == "/favicon.svg")
      return false;
    if (api_key_accepted(req.get_header_value("Authorization"), req.get_header_value("x-api-key"), c.options.api_key))
      return false;
    send_json(res, 401, error_body("invalid API key (give it as Authorization: Bearer KEY)",
                                   "invalid_request_error", "invalid_api_key"));
    return true;
  });
  http.set_error_body([](httplib::Response& res, const std::string& message) {
    send_json(res, res.status,
              error_body(message, res.status >= 500 ? "server_error" : "invalid_request_error", ""));
  });
  http.set_logger([&c](const httplib::Request& req, const httplib::Response& res, std::chrono::milliseconds elapsed) {
    c.metrics.request(res.status);
    const std::string line = log_line(req, res, elapsed, t_note);
    t_note = RequestNote{};
    static std::mutex one_at_a_time;
    std::lock_guard lock(one_at_a_time);
    if (c.options.log) c.options.log(line);
    else std::fprintf(stderr, "%s\n", line.c_str());
  });

  http.post("/v1/chat/completions", guarded([&c](const auto& req, auto& res) {
    handle_completion(c, Endpoint::Chat, req, res);
  }));
  http.post("/v1/completions", guarded([&c](const auto& req, auto& res) {
    handle_completion(c, Endpoint::Completion, req, res);
  }));
  http.post("/v1/messages", guarded_anthropic([&c](const auto& req, auto& res) { handle_messages(c, req, res); }));
  http.post("/v1/messages/count_tokens",
            guarded_anthropic([&c](const auto& req, auto& res) { handle_count_tokens(c, req, res); }));
  http.post("/apply-template", guarded([&c](const auto& req, auto& res) { handle_apply_template(c, req, res); }));
  http.post("/tokenize", guarded([&c](const auto& req, auto& res) { handle_tokenize(c, req, res); }));
  http.post("/detokenize", guarded([&c](const auto& req, auto& res) { handle_detokenize(c, req, res); }));
  http.get("/v1/models", [&c](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200,
              {{"object", "list"},
               {"data", json::array({{{"id", c.options.model_name}, {"object", "model"}, {"created", 0},
                                      {"owned_by", "r1pi"},
                                      {"meta", {{"n_ctx", c.n_ctx}, {"n_vocab", c.tokenizer.n_vocab()},
                                                {"chat_template", chat_template_name(c.chat_template)}}}}})}});
  });
  http.get("/health", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, {{"status", "ok"}}); });
  http.get("/props", [&c](const httplib::Request&, httplib::Response& res) { send_json(res, 200, props_json(c)); });
  http.get("/slots", [&c](const httplib::Request&, httplib::Response& res) { send_json(res, 200, slots_json(c)); });
  for (const char* icon : {"/favicon.svg", "/favicon.ico"})
    http.get(icon, [](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "max-age=86400");
      res.set_content(kFavicon, "image/svg+xml");
    });
  http.get("/metrics", [&c](const httplib::Request&, httplib::Response& res) {
    res.set_content(c.metrics.text(c.queue.length()) + slot_metrics(c), "text/plain; version=0.0.4");
  });
  http.get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(kChatPage, "text/html; charset=utf-8");
  });
}

}  // namespace r1pi
