#include "grammar/grammar_state.h"

namespace r1pi {

GrammarState::GrammarState(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)), stacks_(initial_stacks(*grammar_)) {}

bool GrammarState::accept(std::string_view bytes) {
  StackSet stacks = stacks_;
  Utf8Partial partial = partial_;
  for (const char c : bytes) {
    uint32_t cp = 0;
    switch (utf8_step(partial, static_cast<uint8_t>(c), cp)) {
      case Utf8Step::Invalid:
        return false;
      case Utf8Step::Partial:
        if (!partial_matchable(*grammar_, stacks, partial)) return false;
        break;
      case Utf8Step::Complete:
        stacks = advance_stacks(*grammar_, stacks, cp);
        if (stacks.empty()) return false;
        break;
    }
  }
  stacks_ = std::move(stacks);
  partial_ = partial;
  return true;
}

}  // namespace r1pi
