// A board's checks as people read them (a table, a line per check, the fix under what is not ok)
// and as programs do (--json).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "cluster/board_check.h"

namespace r1pi {

std::string report_table(const BoardReport& report);
nlohmann::ordered_json report_json(const BoardReport& report);

// 0 when every check is ok (or, with warn_ok, none failed); 1 otherwise.
int report_status(const BoardReport& report, bool warn_ok);

// text and spaces up to width: a table's cell.
std::string padded(const std::string& text, size_t width);

}  // namespace r1pi
