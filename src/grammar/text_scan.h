// Reading characters and hex escapes out of grammar and pattern text (gbnf_parser, schema_pattern,
// the JSON Schema converter's key names).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace r1pi {

// The UTF-8 character at text[pos], pos moved past it; nullopt (pos unchanged) for invalid bytes.
std::optional<uint32_t> read_utf8_char(std::string_view text, size_t& pos);
// Exactly `digits` hex digits at text[pos] as a value, pos moved past them; nullopt (pos at the
// first non-digit) when fewer follow.
std::optional<uint32_t> read_hex(std::string_view text, size_t& pos, int digits);

}  // namespace r1pi
