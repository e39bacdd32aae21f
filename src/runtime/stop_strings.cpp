#include "runtime/stop_strings.h"

#include <algorithm>

#include "common/held_text.h"

namespace r1pi {

StopStrings::StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStrings::push(std::string_view text) {
  if (matched_) return {};
  held_ += text;
  size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, held_.find(s));
  if (first != std::string::npos) {
    matched_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  size_t hold = 0;
  for (const std::string& s : stops_) hold = std::max(hold, partial_marker_at_end(held_, s));
  std::string out = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return out;
}

std::string StopStrings::finish() {
  std::string out;
  out.swap(held_);
  return matched_ ? std::string() : out;
}

}  // namespace r1pi
