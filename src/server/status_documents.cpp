#include "server/status_documents.h"

#include <charconv>
#include <cstdlib>
#include <string>

namespace r1pi {

using nlohmann::json;

namespace {

// A float setting as the decimal it was given as (0.3, not the float's 0.30000001192092896).
double decimal(float value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::strtod(std::string(text, end).c_str(), nullptr);
}

// The stored text of a special token ("<｜end▁of▁sentence｜>"), empty when the vocabulary has none.
std::string token_text(const Tokenizer& t, int32_t id) {
  return id >= 0 && size_t(id) < t.vocab().tokens.size() ? t.vocab().tokens[size_t(id)] : std::string();
}

}  // namespace

// GET /slots, llama-server's fields that apply: each slot's request (its ticket), prompt and
// tokens so far, and what its cache held when its last request ended.
json slots_json(const ApiContext& c) {
  json all = json::array();
  for (const SlotState& s : c.slots.states())
    all.push_back({{"id", s.id}, {"n_ctx", c.n_ctx}, {"is_processing", s.busy}, {"id_task", s.request},
                   {"n_prompt_tokens", s.prompt_tokens}, {"next_token", {{"n_decoded", s.generated}}},
                   {"n_cached_tokens", s.held_tokens}, {"requests_served", s.served}});
  return all;
}

// /metrics' lines for the slots and the engine's batches (the mean batch: sequences / forwards).
std::string slot_metrics(const ApiContext& c) {
  const ForwardBatcher::Stats b = c.batches();
  std::string text = "# HELP r1pi_batch_forwards_total Forward passes run for the slots.\n"
                     "# TYPE r1pi_batch_forwards_total counter\nr1pi_batch_forwards_total " +
                     std::to_string(b.forwards) +
                     "\n# HELP r1pi_batch_sequences_total Requests' forwards in them (several per pass when batched).\n"
                     "# TYPE r1pi_batch_sequences_total counter\nr1pi_batch_sequences_total " +
                     std::to_string(b.sequences) +
                     "\n# HELP r1pi_batch_tokens_total Tokens fed in them.\n"
                     "# TYPE r1pi_batch_tokens_total counter\nr1pi_batch_tokens_total " +
                     std::to_string(b.tokens) +
                     "\n# HELP r1pi_slot_busy Whether the slot is serving a request.\n# TYPE r1pi_slot_busy gauge\n";
  const std::vector<SlotState> slots = c.slots.states();
  for (const SlotState& s : slots)
    text += "r1pi_slot_busy{slot=\"" + std::to_string(s.id) + "\"} " + (s.busy ? "1" : "0") + "\n";
  text += "# HELP r1pi_slot_tokens_total Tokens the slot generated.\n# TYPE r1pi_slot_tokens_total counter\n";
  for (const SlotState& s : slots)
    text += "r1pi_slot_tokens_total{slot=\"" + std::to_string(s.id) + "\"} " + std::to_string(s.generated_total) + "\n";
  return text;
}

// GET /props in llama-server's shape, with the fields that mean something here: one slot, the
// defaults a request starts from (the command line's, with R1's recommended sampling where the
// template is R1's and the command line left it unsaid), the template by name (r1pi renders its
// templates in C++, there is no Jinja text), text only.
json props_json(const ApiContext& c) {
  const SamplerParams& s = c.default_sampler;
  const GenerationOptions& g = c.options.chat.generation;
  const json params = {
      {"n_predict", g.n_predict},  // -n; -1: until the end of the turn or a full context
      {"max_tokens", g.n_predict},
      {"seed", -1},  // a request without "seed" gets a random one
      {"temperature", decimal(s.temperature)},
      {"top_k", s.top_k},
      {"top_p", decimal(s.top_p)},
      {"min_p", decimal(s.min_p)},
      {"repeat_penalty", decimal(s.penalties.repeat)},
      {"repeat_last_n", s.penalties.last_n},
      {"frequency_penalty", decimal(s.penalties.frequency)},
      {"presence_penalty", decimal(s.penalties.presence)},
      {"reasoning_format", c.options.split_reasoning ? "deepseek" : "none"},
  };
  json props = {
      {"default_generation_settings",
       {{"id", 0}, {"n_ctx", c.n_ctx}, {"speculative", g.spec.enabled}, {"is_processing", c.queue.length() > 0},
        {"params", params}}},
      {"total_slots", c.slots.size()},
      {"model_alias", c.options.model_name},
      {"model_path", c.options.model_path.empty() ? c.options.model_name : c.options.model_path},
      {"chat_template", chat_template_name(c.chat_template)},
      {"bos_token", token_text(c.tokenizer, c.tokenizer.bos_id())},
      {"eos_token", token_text(c.tokenizer, c.tokenizer.eos_id())},
      {"modalities", {{"vision", false}, {"audio", false}}},
  };
  if (!c.options.build_info.empty()) props["build_info"] = c.options.build_info;
  return props;
}

}  // namespace r1pi
