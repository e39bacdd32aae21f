// Stop strings matched on the text, across token boundaries: text that could be the beginning of
// a stop string is held back, and a match cuts the text before it and ends the generation.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace r1pi {

class StopStrings {
 public:
  explicit StopStrings(std::vector<std::string> stops);  // empty strings are ignored
  // The text that can be shown now (nothing after a match).
  std::string push(std::string_view text);
  // What is still held when the generation ended without a match.
  std::string finish();
  bool matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool matched_ = false;
};

}  // namespace r1pi
