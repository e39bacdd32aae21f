# Writes OUT, a header naming the commit the sources are at (git describe, "-dirty" with
# uncommitted changes), and rewrites it only when that changed: run at every build, so that
# `r1pi --version` names the commit a binary was built from without recompiling on every build.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown (not a git checkout)")
endif()
set(text "#pragma once\n#define R1PI_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
