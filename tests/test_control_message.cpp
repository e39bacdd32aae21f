// The control message rank 0 broadcasts before every forward pass (runtime/mpi/control_message.h):
// what the other ranks accept, and the tokens that follow a long batch. No MPI needed.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/mpi/control_message.h"

namespace r1pi {
namespace {

ControlMessage forward(int pos, int n_tokens) {
  ControlMessage m;
  m.op = ControlOp::Forward;
  m.pos = pos;
  m.n_tokens = n_tokens;
  m.pick = PickMode::Greedy;
  m.seal();
  return m;
}

TEST(ControlMessage, AcceptsWhatRankZeroSends) {
  EXPECT_EQ(forward(0, 1).problem(512, 300), "");
  EXPECT_EQ(forward(0, 200).problem(512, 300), "");
  EXPECT_EQ(forward(511, 1).problem(512, 300), "");
  ControlMessage stop;
  stop.seal();
  EXPECT_EQ(stop.problem(512, 300), "");
}

TEST(ControlMessage, RefusesCorruptedOrForeignMessages) {
  ControlMessage m = forward(0, 3);
  m.tokens[1] = 7;  // changed after sealing
  EXPECT_EQ(m.problem(512, 300), "checksum mismatch");
  m = forward(510, 3);
  EXPECT_NE(m.problem(512, 300), "");  // past the context
  m = forward(0, 0);
  EXPECT_NE(m.problem(512, 300), "");
  m = forward(0, 1);
  m.tokens[0] = 300;
  m.seal();
  EXPECT_EQ(m.problem(512, 300), "token id 300 out of range");
  m = forward(0, 1);
  m.version = 1;  // before speculative decoding's pick_rows
  m.seal();
  EXPECT_NE(m.problem(512, 300).find("version 1"), std::string::npos);
}

// Verification asks for the picks of every row of the batch; any other count is refused.
TEST(ControlMessage, PicksForTheLastRowOrEveryRow) {
  ControlMessage m = forward(10, 5);
  m.pick_rows = 5;
  m.seal();
  EXPECT_EQ(m.problem(512, 300), "");
  m.pick_rows = 3;
  m.seal();
  EXPECT_EQ(m.problem(512, 300), "pick_rows 3: 1 or the 5 tokens");
  m.pick_rows = 0;
  m.seal();
  EXPECT_NE(m.problem(512, 300), "");
}

// A receiver sizes the second broadcast from n_extra_tokens(), and only after problem() accepted
// the message: a corrupted n_tokens (here 2^31 - 1) is refused before it could size anything.
TEST(ControlMessage, ExtraTokensFollowOnlyLongValidBatches) {
  EXPECT_EQ(forward(0, ControlMessage::kInlineTokens).n_extra_tokens(), 0);
  EXPECT_EQ(forward(0, ControlMessage::kInlineTokens + 5).n_extra_tokens(), 5);
  ControlMessage stop;
  stop.n_tokens = 1000;
  EXPECT_EQ(stop.n_extra_tokens(), 0);
  ControlMessage huge = forward(0, 2147483647);
  EXPECT_NE(huge.problem(4096, 300), "");
}

TEST(ControlMessage, ExtraTokensAreChecked) {
  const std::vector<int32_t> good = {0, 5, 299}, high = {0, 300}, negative = {-1};
  EXPECT_EQ(extra_tokens_problem(good.data(), good.size(), 300), "");
  EXPECT_EQ(extra_tokens_problem(high.data(), high.size(), 300),
            "token id 300 out of range (token 65 of the batch)");
  EXPECT_NE(extra_tokens_problem(negative.data(), negative.size(), 300), "");
  EXPECT_EQ(extra_tokens_problem(nullptr, 0, 300), "");
}

}  // namespace
}  // namespace r1pi
