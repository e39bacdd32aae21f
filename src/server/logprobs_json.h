// Log-probabilities in OpenAI's shapes: a chat choice's {"content": [{token, logprob, bytes,
// top_logprobs: [...]}]} and a legacy completion's {tokens, token_logprobs, top_logprobs,
// text_offset}. A token's text is its bytes, which may be part of a UTF-8 character: "bytes"
// holds them exactly, "token" as text (U+FFFD for a cut character, as OpenAI shows it).
#pragma once
#include <nlohmann/json.hpp>

#include <vector>

#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace r1pi {

nlohmann::json chat_logprobs_json(const Tokenizer& tokenizer, const std::vector<PickLogprobs>& picks);
// text_offset counts from `offset` (the bytes of the answer before these tokens).
nlohmann::json completion_logprobs_json(const Tokenizer& tokenizer, const std::vector<PickLogprobs>& picks,
                                        size_t offset = 0);

}  // namespace r1pi
