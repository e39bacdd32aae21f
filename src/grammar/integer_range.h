// JSON Schema's integer bounds as GBNF: the decimal spellings of the integers in [min, max]
// (no leading zeros, "-" for negatives), by splitting the range into runs that share leading
// digits and end in free [0-9] digits. An open side stops at 16 digits, the length the plain
// integer rule allows.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace r1pi {

// The largest magnitude the grammar spells: 16 digits.
constexpr int64_t kMaxGrammarInteger = 9999999999999999;

// A GBNF expression (no trailing whitespace). Bounds beyond +-kMaxGrammarInteger are clamped;
// throws r1pi::Error when min > max.
std::string integer_range_gbnf(std::optional<int64_t> min, std::optional<int64_t> max);

}  // namespace r1pi
