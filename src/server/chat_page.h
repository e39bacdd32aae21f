// The web chat page GET / serves: one HTML file with its CSS and JS inline, compiled into the
// binary from chat_page.html (CMake writes it into a C++ raw string), so that it works on a
// cluster with no internet and no files beside the binary.
#pragma once

namespace r1pi {

extern const char* const kChatPage;

}  // namespace r1pi
