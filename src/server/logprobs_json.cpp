#include "server/logprobs_json.h"

namespace r1pi {

using nlohmann::json;

namespace {

json bytes_of(const std::string& text) {
  json out = json::array();
  for (unsigned char ch : text) out.push_back(int(ch));
  return out;
}

json entry(const Tokenizer& t, const TokenLogprob& p) {
  const std::string text = t.token_bytes(p.id);
  return {{"id", p.id}, {"token", text}, {"logprob", p.logprob}, {"bytes", bytes_of(text)}};
}

}  // namespace

json chat_logprobs_json(const Tokenizer& tokenizer, const std::vector<PickLogprobs>& picks) {
  json content = json::array();
  for (const PickLogprobs& p : picks) {
    json one = entry(tokenizer, p.chosen);
    json top = json::array();
    for (const TokenLogprob& alt : p.top) top.push_back(entry(tokenizer, alt));
    one["top_logprobs"] = top;
    content.push_back(one);
  }
  return {{"content", content}};
}

json completion_logprobs_json(const Tokenizer& tokenizer, const std::vector<PickLogprobs>& picks, size_t offset) {
  json tokens = json::array(), logprobs = json::array(), tops = json::array(), offsets = json::array();
  for (const PickLogprobs& p : picks) {
    const std::string text = tokenizer.token_bytes(p.chosen.id);
    tokens.push_back(text);
    logprobs.push_back(p.chosen.logprob);
    json top = json::object();
    for (const TokenLogprob& alt : p.top) top[tokenizer.token_bytes(alt.id)] = alt.logprob;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += text.size();
  }
  return {{"tokens", tokens}, {"token_logprobs", logprobs}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

}  // namespace r1pi
