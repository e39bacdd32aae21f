# Writes the chat page into a C++ source file as a raw string (cmake -DIN=... -DOUT=... -P this).
file(READ ${IN} page)
string(FIND "${page}" ")r1pi_page\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string's end marker")
endif()
file(WRITE ${OUT} "// Generated from src/server/chat_page.html by src/server/embed_page.cmake.\n"
     "#include \"server/chat_page.h\"\n\nnamespace r1pi {\n\nconst char* const kChatPage = R\"r1pi_page(${page})r1pi_page\";\n\n}  // namespace r1pi\n")
