#include "grammar/integer_range.h"

#include <algorithm>
#include <vector>

#include "common/error.h"

namespace r1pi {
namespace {

std::string any_digits(size_t n) {
  if (n == 0) return "";
  return n == 1 ? " [0-9]" : " [0-9]{" + std::to_string(n) + "}";
}

// The numbers between a and b, both of the same length, as digit strings.
std::string same_length_range(const std::string& a, const std::string& b) {
  if (a.empty()) return "";
  if (a == b) return " \"" + a + "\"";
  const std::string a_rest = a.substr(1), b_rest = b.substr(1);
  if (a[0] == b[0]) return " \"" + std::string(1, a[0]) + "\"" + same_length_range(a_rest, b_rest);
  const bool a_rest_low = a_rest.find_first_not_of('0') == std::string::npos;
  const bool b_rest_high = b_rest.find_first_not_of('9') == std::string::npos;
  auto digit_class = [](char lo, char hi) {
    return lo == hi ? " [" + std::string(1, lo) + "]" : " [" + std::string(1, lo) + "-" + std::string(1, hi) + "]";
  };
  std::vector<std::string> alternatives;
  // The first digit's own runs: a[0] with the rest of a up, the digits strictly between free,
  // b[0] with the rest up to b's.
  char first_free = char(a[0] + 1), last_free = char(b[0] - 1);
  if (a_rest_low)
    first_free = a[0];
  else
    alternatives.push_back(" \"" + std::string(1, a[0]) + "\"" +
                           same_length_range(a_rest, std::string(a_rest.size(), '9')));
  if (b_rest_high) last_free = b[0];
  if (first_free <= last_free) alternatives.push_back(digit_class(first_free, last_free) + any_digits(a_rest.size()));
  if (!b_rest_high)
    alternatives.push_back(" \"" + std::string(1, b[0]) + "\"" +
                           same_length_range(std::string(b_rest.size(), '0'), b_rest));
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = " (";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " |" : "") + alternatives[i];
  return out + " )";
}

// 0 <= lo <= hi: one run per length.
std::string non_negative_range(int64_t lo, int64_t hi) {
  const std::string los = std::to_string(lo), his = std::to_string(hi);
  std::vector<std::string> alternatives;
  for (size_t len = los.size(); len <= his.size(); ++len) {
    std::string a = los;
    if (len != los.size()) a = std::string(len, '0'), a[0] = '1';
    const std::string b = len == his.size() ? his : std::string(len, '9');
    alternatives.push_back(same_length_range(a, b));
  }
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = " (";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " |" : "") + alternatives[i];
  return out + " )";
}

}  // namespace

std::string integer_range_gbnf(std::optional<int64_t> min, std::optional<int64_t> max) {
  const int64_t lo = std::clamp<int64_t>(min.value_or(-kMaxGrammarInteger), -kMaxGrammarInteger, kMaxGrammarInteger);
  const int64_t hi = std::clamp<int64_t>(max.value_or(kMaxGrammarInteger), -kMaxGrammarInteger, kMaxGrammarInteger);
  if (lo > hi)
    throw Error("json_schema: no integer lies between minimum " + std::to_string(lo) + " and maximum " +
                std::to_string(hi));
  std::vector<std::string> parts;
  if (lo < 0) parts.push_back(" \"-\"" + non_negative_range(hi < 0 ? -hi : 1, -lo));
  if (hi >= 0) parts.push_back(non_negative_range(std::max<int64_t>(lo, 0), hi));
  std::string out = parts.size() == 1 ? parts[0] : " (" + parts[0] + " |" + parts[1] + " )";
  return out.substr(1);  // no leading space
}

}  // namespace r1pi
