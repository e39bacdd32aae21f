// Small UTF-8 helpers the tokenizer needs: encoding a code point, splitting text into characters
// while tolerating invalid bytes, and finding where an incomplete trailing character starts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace r1pi::utf8 {

// Appends the UTF-8 encoding of a code point (< 0x110000).
void append(std::string& out, uint32_t code_point);

// Length of the well-formed UTF-8 character at text[pos], or 1 for a byte that does not start one
// (stray continuation byte, truncated or overlong sequence, surrogate, > U+10FFFF). Callers thus
// treat every invalid byte as a character of its own and never lose or misread bytes.
size_t char_length(std::string_view text, size_t pos);

// The code point of the well-formed character at text[pos] (char_length(text, pos) bytes), or the
// byte value itself when the byte is invalid.
uint32_t decode(std::string_view text, size_t pos);

// How many leading bytes of text can be shown now: all of it, except a trailing prefix of a
// well-formed character whose remaining bytes have not arrived yet.
size_t complete_prefix_length(std::string_view text);

}  // namespace r1pi::utf8
