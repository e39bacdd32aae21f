// Text from a model file (general.name, metadata values, tensor names, and so the error messages
// that quote them) as it may reach a terminal: a file could otherwise move the cursor, retitle the
// window or clear the screen with escape sequences, or garble the line with invalid UTF-8.
#pragma once
#include <string>
#include <string_view>

namespace r1pi {

// text with each control character (C0 but tab and, when keep_newlines, newline; DEL; C1) and each
// byte that is not part of well-formed UTF-8 written as \xNN, and the bidirectional overrides and
// isolates (U+202A-U+202E, U+2066-U+2069) as \u{NNNN}; everything else, and so ordinary text in any
// script, unchanged.
std::string printable_text(std::string_view text, bool keep_newlines = false);

}  // namespace r1pi
