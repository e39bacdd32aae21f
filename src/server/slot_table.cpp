#include "server/slot_table.h"

#include <algorithm>

namespace r1pi {

SlotTable::SlotTable(int n) : slots_(size_t(n)) {
  for (int i = 0; i < n; ++i) slots_[size_t(i)].id = i;
}

void SlotTable::start(int slot, uint64_t request, int prompt_tokens) {
  std::lock_guard lock(mutex_);
  SlotState& s = slots_.at(size_t(slot));
  s.busy = true;
  s.request = request;
  s.prompt_tokens = prompt_tokens;
  s.generated = 0;
}

void SlotTable::generated(int slot) {
  std::lock_guard lock(mutex_);
  SlotState& s = slots_.at(size_t(slot));
  ++s.generated;
  ++s.generated_total;
}

void SlotTable::finish(int slot, int held_tokens) {
  std::lock_guard lock(mutex_);
  SlotState& s = slots_.at(size_t(slot));
  s.busy = false;
  s.held_tokens = held_tokens;
  ++s.served;
}

std::vector<SlotState> SlotTable::states() {
  std::lock_guard lock(mutex_);
  return slots_;
}

int choose_slot(const std::vector<const std::vector<int32_t>*>& held, const std::vector<bool>& free,
                const std::vector<int32_t>& prompt, int& copy_from, const std::function<bool(int, int)>& resumable) {
  auto common = [&](size_t i) {
    const std::vector<int32_t>& h = *held[i];
    const size_t n = size_t(std::mismatch(h.begin(), h.end(), prompt.begin(), prompt.end()).first - h.begin());
    return !resumable || resumable(int(i), int(n)) ? n : 0;
  };
  int chosen = -1, best = -1;
  size_t chosen_common = 0, best_common = 0;
  for (size_t i = 0; i < held.size(); ++i) {
    const size_t c = common(i);
    if (free[i] && (chosen < 0 || c > chosen_common)) chosen = int(i), chosen_common = c;
    if (c > best_common) best = int(i), best_common = c;
  }
  copy_from = chosen >= 0 && best >= 0 && best != chosen && best_common > chosen_common ? best : -1;
  return chosen;
}

}  // namespace r1pi
