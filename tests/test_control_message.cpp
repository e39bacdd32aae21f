// The control message rank 0 broadcasts before every forward pass and every change to the KV
// cache's slots (runtime/mpi/control_message.h): what the other ranks accept, and the entries that
// follow a long batch. No MPI needed.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/mpi/control_message.h"

namespace r1pi {
namespace {

constexpr int kCtx = 512, kSeqs = 4;
constexpr int64_t kVocab = 300;

// n tokens of slot seq from position pos, a greedy pick after the last.
ControlMessage forward(int pos, int n, int seq = 0) {
  ControlMessage m;
  m.op = ControlOp::Forward;
  m.n_entries = n;
  for (int i = 0; i < n && i < ControlMessage::kInlineEntries; ++i)
    m.entries[i] = {.token = 1, .pos = pos + i, .seq = uint16_t(seq),
                    .pick = i == n - 1 ? PickMode::Greedy : PickMode::None};
  m.seal();
  return m;
}

std::string problem(const ControlMessage& m) { return m.problem(kCtx, kVocab, kSeqs); }

TEST(ControlMessage, AcceptsWhatRankZeroSends) {
  EXPECT_EQ(problem(forward(0, 1)), "");
  EXPECT_EQ(problem(forward(0, 200)), "");
  EXPECT_EQ(problem(forward(511, 1, 3)), "");
  ControlMessage stop;
  stop.seal();
  EXPECT_EQ(problem(stop), "");
  ControlMessage m;
  m.op = ControlOp::Truncate;
  m.seq = 3;
  m.n = kCtx;
  m.seal();
  EXPECT_EQ(problem(m), "");
  m.op = ControlOp::Copy;
  m.src = 1;
  m.seal();
  EXPECT_EQ(problem(m), "");
}

TEST(ControlMessage, RefusesCorruptedOrForeignMessages) {
  ControlMessage m = forward(0, 3);
  m.entries[1].token = 7;  // changed after sealing
  EXPECT_EQ(problem(m), "checksum mismatch");
  EXPECT_EQ(problem(forward(512, 1)), "position 512 outside the context of 512 (token 0 of the batch)");
  EXPECT_EQ(problem(forward(0, 1, kSeqs)), "slot 4 outside 0..3 (token 0 of the batch)");
  EXPECT_NE(problem(forward(0, 0)), "");
  m = forward(0, 1);
  m.entries[0].token = 300;
  m.seal();
  EXPECT_EQ(problem(m), "token id 300 out of range (token 0 of the batch)");
  m = forward(0, 1);
  m.version = 2;  // before batches of sequences
  m.seal();
  EXPECT_NE(problem(m).find("version 2"), std::string::npos);
  m = forward(0, 1);
  m.op = ControlOp(9);
  m.seal();
  EXPECT_EQ(problem(m), "unknown operation 9");
}

TEST(ControlMessage, RefusesSlotOperationsOutsideTheSlots) {
  ControlMessage m;
  m.op = ControlOp::Truncate;
  m.seq = -1;
  m.seal();
  EXPECT_NE(problem(m), "");
  m.seq = 0;
  m.n = kCtx + 1;
  m.seal();
  EXPECT_NE(problem(m), "");
  m.op = ControlOp::Copy;
  m.src = kSeqs;
  m.seal();
  EXPECT_NE(problem(m), "");
}

// Each entry says how the token after it is picked; top-k needs 1 .. n_vocab candidates.
TEST(ControlMessage, PickModesAreChecked) {
  ControlMessage m = forward(10, 5);
  for (int i = 0; i < 5; ++i) m.entries[i].pick = PickMode::TopK, m.entries[i].top_k = 40;
  m.seal();
  EXPECT_EQ(problem(m), "");
  m.entries[2].top_k = 0;
  m.seal();
  EXPECT_EQ(problem(m), "top_k 0 outside 1..300 (token 2 of the batch)");
  m.entries[2].top_k = 301;
  m.seal();
  EXPECT_NE(problem(m), "");
  m.entries[2].top_k = 1;
  m.entries[3].pick = PickMode(7);
  m.seal();
  EXPECT_EQ(problem(m), "unknown pick mode (token 3 of the batch)");
  // A grammar's row sends candidates as top-k does: the same bounds.
  for (int top_k : {1, 0}) {
    m.entries[3].pick = PickMode::Ruled;
    m.entries[3].top_k = top_k;
    m.seal();
    EXPECT_EQ(problem(m), top_k ? "" : "top_k 0 outside 1..300 (token 3 of the batch)");
  }
}

TEST(ControlMessage, PenaltiesAreChecked) {
  ControlMessage m = forward(10, 5);
  m.entries[4].penalties = {1.3f, -1, 0.5f, -0.5f};
  m.seal();
  EXPECT_EQ(problem(m), "");
  m.entries[4].penalties = {1.3f, kCtx + 1, 0.5f, 0.0f};
  m.seal();
  EXPECT_EQ(problem(m), "penalty window of 513 tokens outside -1..512 (token 4 of the batch)");
  m.entries[4].penalties = {1.3f, 64, std::nanf(""), 0.0f};
  m.seal();
  EXPECT_EQ(problem(m), "a penalty that is not a number (token 4 of the batch)");
}

// A receiver sizes the second broadcast from n_extra_entries(), and only after problem() accepted
// the message: a corrupted n_entries (here 2^31 - 1) is refused before it could size anything.
TEST(ControlMessage, ExtraEntriesFollowOnlyLongValidBatches) {
  EXPECT_EQ(forward(0, ControlMessage::kInlineEntries).n_extra_entries(), 0);
  EXPECT_EQ(forward(0, ControlMessage::kInlineEntries + 5).n_extra_entries(), 5);
  ControlMessage stop;
  stop.n_entries = 1000;
  EXPECT_EQ(stop.n_extra_entries(), 0);
  EXPECT_NE(forward(0, 2147483647).problem(4096, kVocab, 1), "");
}

TEST(ControlMessage, ExtraEntriesAreChecked) {
  const std::vector<BatchEntry> good = {{.token = 0, .pos = 64}, {.token = 299, .pos = 65, .seq = 3}};
  const std::vector<BatchEntry> high = {{.token = 0}, {.token = 300}}, negative = {{.token = 1, .pos = -1}};
  EXPECT_EQ(entries_problem(good.data(), good.size(), kCtx, kVocab, kSeqs, 64), "");
  EXPECT_EQ(entries_problem(high.data(), high.size(), kCtx, kVocab, kSeqs, 64),
            "token id 300 out of range (token 65 of the batch)");
  EXPECT_NE(entries_problem(negative.data(), negative.size(), kCtx, kVocab, kSeqs), "");
  EXPECT_EQ(entries_problem(nullptr, 0, kCtx, kVocab, kSeqs), "");
}

}  // namespace
}  // namespace r1pi
