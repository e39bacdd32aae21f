// GPT-2's bytes_to_unicode: byte-level BPE vocabularies spell every byte as a printable character
// (e.g. space as "Ġ" U+0120, newline as "Ċ" U+010A), so token texts are valid UTF-8 strings even
// when a token holds part of a multi-byte character.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace r1pi::byte_mapping {

// The UTF-8 text of the character that stands for `byte`.
const std::string& to_text(uint8_t byte);

// Maps each byte of raw text to its character: the form BPE vocabularies and merges use.
std::string encode(std::string_view raw);

// Inverse of encode: each mapped character back to its byte. Characters outside the mapping (not
// produced by encode, e.g. in a hand-made vocabulary) are kept as their own UTF-8 bytes.
std::string decode(std::string_view mapped);

}  // namespace r1pi::byte_mapping
