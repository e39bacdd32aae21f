// The keys the chat's line editor reads, from the terminal's bytes: UTF-8 characters whatever the
// locale says (the chat's text is UTF-8, as the model's vocabulary is), and a bracketed paste
// (ESC[200~ ... ESC[201~, sent by the terminal while the chat has it on) as its characters, each
// of its line breaks given as an Enter marked as the paste's, so that the lines join into one
// message instead of one turn each. Bytes in, keys out: tested without a terminal.
#pragma once
#include <deque>
#include <functional>
#include <string>
#include <string_view>

namespace r1pi {

// What the terminal sends around a paste while the chat has asked for bracketed pastes.
constexpr std::string_view kPasteStart = "\x1b[200~";
constexpr std::string_view kPasteEnd = "\x1b[201~";

class TerminalKeys {
 public:
  // read_byte: the next byte (0..255) or -1 at the end of input, on an error or an interrupted
  // read. The end is final: every key after it is -1 too.
  explicit TerminalKeys(std::function<int()> read_byte) : read_byte_(std::move(read_byte)) {}

  // The next key as a Unicode code point ('\r' for an Enter), or -1 at the end. Invalid bytes and
  // NUL bytes are skipped (see line_reader.cpp for why NUL).
  int next();
  // Whether the last key next() gave was a line break inside a paste (an Enter the person did not type).
  bool last_was_paste_break() const { return last_was_paste_break_; }

 private:
  int byte();
  int next_character();
  bool read_paste();

  std::function<int()> read_byte_;
  bool ended_ = false;
  std::string unread_;    // bytes read ahead that are not keys yet, given again first
  std::deque<int> paste_; // a paste's keys not given yet; kPasteBreak for its line breaks
  bool last_was_paste_break_ = false;
};

}  // namespace r1pi
