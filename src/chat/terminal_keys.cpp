#include "chat/terminal_keys.h"

#include <cstdint>

#include "tokenizer/utf8.h"

namespace r1pi {

namespace {

constexpr int kEscape = 0x1b;
constexpr int kPasteBreak = -2;  // in TerminalKeys::paste_: a line break of the paste

// What of a paste goes into the line: its text, tabs and line breaks; not the other control
// characters, which the editor would take as commands (an ESC would start a key sequence).
bool pasted_text(uint32_t c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

}  // namespace

int TerminalKeys::byte() {
  if (!unread_.empty()) {
    const int b = uint8_t(unread_.front());
    unread_.erase(0, 1);
    return b;
  }
  if (ended_) return -1;
  const int b = read_byte_();
  ended_ = b < 0;
  return b;
}

// One character, read a byte at a time (nothing is taken from the terminal beyond the key).
int TerminalKeys::next_character() {
  std::string bytes;
  for (;;) {
    const int b = byte();
    if (b < 0) return -1;
    if (b == 0 && bytes.empty()) continue;
    bytes += char(b);
    if (utf8::complete_prefix_length(bytes) == 0) continue;  // the first bytes of a character
    const size_t n = utf8::char_length(bytes, 0);
    if (n == bytes.size() && (n > 1 || b < 0x80)) return int(utf8::decode(bytes, 0));
    unread_.insert(0, bytes.substr(1));  // an invalid byte: dropped, the next may start a character
    bytes.clear();
  }
}

// After kPasteStart: the paste's keys, up to kPasteEnd. A CR (what terminals send for a pasted
// line break, which the terminal's ICRNL may have made an LF), an LF or a CR LF pair is one line
// break. False when the input ends inside the paste.
bool TerminalKeys::read_paste() {
  std::string text;
  while (!text.ends_with(kPasteEnd)) {
    const int b = byte();
    if (b < 0) return false;
    text += char(b);
  }
  text.resize(text.size() - kPasteEnd.size());
  for (size_t i = 0, n = 0; i < text.size(); i += n) {
    n = utf8::char_length(text, i);
    const uint32_t c = utf8::decode(text, i);
    if (n == 1 && c >= 0x80) continue;  // an invalid byte
    if (c == '\r' && text.substr(i + 1, 1) == "\n") continue;
    if (c == '\r' || c == '\n')
      paste_.push_back(kPasteBreak);
    else if (pasted_text(c))
      paste_.push_back(int(c));
  }
  return true;
}

int TerminalKeys::next() {
  for (;;) {
    if (!paste_.empty()) {
      const int key = paste_.front();
      paste_.pop_front();
      last_was_paste_break_ = key == kPasteBreak;
      return last_was_paste_break_ ? '\r' : key;
    }
    last_was_paste_break_ = false;
    const int key = next_character();
    if (key != kEscape) return key;
    // An ESC starts a paste or is a key of its own (Escape, Alt-x, an arrow's sequence): the bytes
    // read to tell which are given to the editor again when it is not a paste. The editor itself
    // waits for the key after an ESC too, so reading it here delays nothing.
    std::string seen(1, char(kEscape));
    while (seen.size() < kPasteStart.size() && kPasteStart.starts_with(seen)) {
      const int b = byte();
      if (b < 0) break;
      seen += char(b);
    }
    if (seen != kPasteStart) {
      unread_.insert(0, seen.substr(1));
      return kEscape;
    }
    if (!read_paste()) return -1;  // the input ended (or Ctrl-C interrupted it) inside the paste
  }
}

}  // namespace r1pi
