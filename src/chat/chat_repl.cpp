#include "chat/chat_repl.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>

#include "chat/chat_command.h"
#include "chat/chat_format.h"
#include "chat/completion.h"
#include "chat/line_reader.h"
#include "common/error.h"

namespace r1pi {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

constexpr const char* kDim = "\x1b[2m";
constexpr const char* kNormal = "\x1b[0m";

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// How an answer appears: on a terminal the reasoning is dimmed (or hidden) and the think markers
// are not shown; piped, the text is exactly what was generated ("<think>" included when the
// answer wrote it, as Qwen3's do).
class AnswerPrinter {
 public:
  AnswerPrinter(bool terminal, bool hide_think, ReasoningStart start)
      : terminal_(terminal), hide_think_(hide_think), writes_think_start_(start == ReasoningStart::Opens) {}
  void operator()(const TextParts& parts) {
    if (!parts.reasoning.empty() && !hide_think_) {
      if (terminal_ && !dimmed_) print(kDim);
      if (!terminal_ && !shown_reasoning_ && writes_think_start_) print("<think>");
      dimmed_ = terminal_;
      print(parts.reasoning);
      shown_reasoning_ = true;
    }
    if (!parts.content.empty()) {
      if (shown_reasoning_ && !terminal_) print("</think>");
      finish();
      shown_reasoning_ = false;
      print(parts.content);
    }
  }
  // Back to normal text at the end of the answer.
  void finish() {
    if (dimmed_) print(kNormal);
    dimmed_ = false;
  }

 private:
  bool terminal_, hide_think_, writes_think_start_;
  bool dimmed_ = false, shown_reasoning_ = false;
};

void print_stats(const Completion& c) {
  const GenerationResult& r = c.result;
  std::fprintf(stderr,
               "stats: prompt %d tokens (%d from the cache, %d fed at %.2f tok/s), answer %d tokens at "
               "%.2f tok/s, finish: %s\n",
               c.prompt_tokens, c.cached_tokens, r.prefill_tokens,
               r.prefill_tokens / std::max(r.prefill_seconds, 1e-9), c.completion_tokens(),
               r.decode_tokens / std::max(r.decode_seconds, 1e-9), c.finish_reason.c_str());
}

}  // namespace

int run_chat(TokenSource& source, const Tokenizer& tokenizer, const ChatOptions& options) {
  const ChatFormat format = chat_format_for(options, tokenizer);
  const ChatTemplate chat_template = format.family;
  CompletionSettings settings;
  settings.generation = options.generation;
  settings.generation.sampler = chat_sampler(options, chat_template);
  settings.stop = turn_end_strings(chat_template);
  settings.stop.insert(settings.stop.end(), options.stop.begin(), options.stop.end());
  settings.reasoning = answer_start(chat_template);
  settings.cancelled = [] { return g_interrupted != 0; };
  std::fprintf(stderr,
               "chat: template %s, reasoning %s, temp %.2f, top-p %.2f; Ctrl-C stops an answer; %s\n",
               format.origin.c_str(), options.reasoning ? "on" : "off",
               settings.generation.sampler.temperature, settings.generation.sampler.top_p, kChatCommands);

  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigaction(SIGINT, &action, nullptr);

  // NO_COLOR (no-color.org) asks for plain text where isatty cannot tell: under mpirun rank 0
  // writes to Open MPI's pseudo-terminal wherever mpirun's own output goes.
  const bool terminal = isatty(STDOUT_FILENO) == 1 && !std::getenv("NO_COLOR");
  LineReader reader;
  std::vector<ChatMessage> messages;
  if (!options.system.empty()) messages.push_back({.role = "system", .content = options.system});
  const size_t first_turn = messages.size();
  Completion last;
  ChatInputLines lines;
  for (;;) {
    // Cleared before the prompt, not after it: a Ctrl-C that comes once the line is read is meant
    // for the answer it started, however soon (a Ctrl-C at the prompt ends the read: the chat ends).
    g_interrupted = 0;
    const char* cue = !reader.interactive() ? "" : lines.open() ? "... " : "> ";
    const std::optional<ReadLine> line = reader.read(cue);
    if (!line) {
      if (reader.interactive()) std::fputc('\n', stdout);  // Ctrl-D left the cursor after the prompt
      if (lines.open()) std::fprintf(stderr, "chat: the input ended inside a message of several lines; it was not sent\n");
      break;
    }
    if (!lines.add(line->text, line->pasted_break)) continue;
    const std::string whole = lines.take();
    reader.remember(whole);
    ChatInput input = read_chat_input(whole);
    using Kind = ChatInput::Kind;
    if (input.kind == Kind::Quit) break;
    switch (input.kind) {
      case Kind::Reset:
        messages.resize(first_turn);
        std::fprintf(stderr, "(a new conversation)\n");
        continue;
      case Kind::Stats: print_stats(last); continue;
      case Kind::Help: std::fprintf(stderr, "commands: %s\n%s\n", kChatCommands, kChatMultilineHelp); continue;
      case Kind::Refused: std::fprintf(stderr, "chat: %s\n", input.text.c_str()); continue;
      case Kind::Nothing: continue;
      default: break;
    }
    messages.push_back({.role = "user", .content = std::move(input.text)});
    PromptInput in;
    in.messages = messages;
    if (!options.reasoning) in.thinking = false;
    if (!options.reasoning_effort.empty()) in.kwargs["reasoning_effort"] = options.reasoning_effort;
    std::vector<int32_t> prompt;
    try {
      prompt = encode_chat_prompt(format, tokenizer, in);
    } catch (const jinja::Error& e) {  // the template refused the conversation (raise_exception)
      std::fprintf(stderr, "chat: the template refused this conversation: %s\n", e.what());
      messages.pop_back();
      continue;
    }
    if (prompt.size() >= size_t(source.n_ctx())) {
      std::fprintf(stderr, "error: the conversation is %zu tokens and does not fit the context of %d (/reset starts over)\n",
                   prompt.size(), source.n_ctx());
      messages.pop_back();
      continue;
    }
    settings.generation.n_predict = n_predict_within(options.generation.n_predict, prompt.size(), source.n_ctx());
    AnswerPrinter printer(terminal, options.hide_think, settings.reasoning);
    last = complete(source, tokenizer, prompt, settings, std::ref(printer));
    printer.finish();
    print(last.finish_reason == "cancelled" ? " [stopped]\n" : "\n");
    // An unfinished reasoning is closed, so that the template drops it from the history too.
    messages.push_back({.role = "assistant",
                        .content = last.reasoned ? last.text.reasoning + "</think>" + last.text.content
                                                 : last.text.content});
  }
  return 0;
}

}  // namespace r1pi
