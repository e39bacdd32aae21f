// The server's slots (--parallel): which request each one serves, for /slots and /metrics, and
// which slot a new request takes (the prompt cache across slots).
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace r1pi {

struct SlotState {
  int id = 0;
  bool busy = false;
  uint64_t request = 0;     // the request's ticket (its place in the arrival order); 0: none yet
  int prompt_tokens = 0;    // the request's prompt
  int generated = 0;        // its tokens so far
  int held_tokens = 0;      // what the slot's cache held when its last request ended
  uint64_t served = 0;      // requests served in this slot
  uint64_t generated_total = 0;
};

class SlotTable {
 public:
  explicit SlotTable(int n);
  int size() const { return int(slots_.size()); }
  void start(int slot, uint64_t request, int prompt_tokens);
  void generated(int slot);                // one more token of the slot's request
  void finish(int slot, int held_tokens);
  std::vector<SlotState> states();

 private:
  std::mutex mutex_;
  std::vector<SlotState> slots_;
};

// Where a prompt goes: the free slot whose cache shares the longest beginning with it (ties to the
// lower slot). copy_from: a slot (busy or not) whose cache shares a longer beginning, to copy into
// the chosen slot first, or -1. held[i]: slot i's cached tokens; free[i]: slot i takes requests;
// resumable(i, n): whether slot i can go on at position n (TokenSource::resumable: a beginning it
// cannot go on from counts as none). -1 when no slot is free.
int choose_slot(const std::vector<const std::vector<int32_t>*>& held, const std::vector<bool>& free,
                const std::vector<int32_t>& prompt, int& copy_from,
                const std::function<bool(int, int)>& resumable = {});

}  // namespace r1pi
