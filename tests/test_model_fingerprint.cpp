// The fingerprint that ranks compare at start-up (src/model/model_fingerprint.h): by default it
// samples every tensor at offsets a fixed seed draws, so a stretch damaged in the middle of a large
// tensor shows; --verify-weights full hashes every byte, so one changed byte shows too.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model_fingerprint.h"
#include "test_support.h"

namespace r1pi {
namespace {

constexpr uint64_t kTensorBytes = 4 << 20;  // one F32 tensor of 4 MiB: 64 times what is sampled

// A file with a small tensor (hashed whole) and a large one, with bytes from a fixed pattern.
std::string write_model(const std::string& path) {
  GgufWriter w;
  w.add("general.architecture", GgufValue::string("llama"));
  w.add_tensor("small.weight", {256}, GgmlType::F32);
  w.add_tensor("large.weight", {kTensorBytes / 4}, GgmlType::F32);
  w.open(path);
  std::vector<uint8_t> bytes(256 * 4 + kTensorBytes);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 2654435761u >> 13);
  w.write_data(bytes.data(), bytes.size());
  w.close();
  return path;
}

// A copy of the file at `from` with n bytes of tensor `name` from offset `at` on flipped.
std::string changed_copy(const std::string& from, const std::string& to, const char* name, uint64_t at, uint64_t n) {
  std::string bytes = test::read_file(from);
  const GgufFile file = GgufFile::open(from);
  for (const GgufTensorInfo& t : file.tensors())
    if (t.name == name)
      for (uint64_t i = 0; i < n; ++i) bytes[file.data_offset() + t.offset + at + i] ^= char(0x5a);
  std::ofstream(to, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return to;
}

Fingerprint of(const std::string& path, WeightCheck check = WeightCheck::Sampled) {
  return model_fingerprint(GgufFile::open(path), check);
}

class ModelFingerprint : public ::testing::Test {
 protected:
  // A folder per test: ctest runs them at once, and one test's fresh folder must not remove the
  // file another is writing.
  const std::string dir =
      test::scratch_dir(std::string("model_fingerprint/") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  const std::string original = write_model(dir + "/original.gguf");
};

TEST_F(ModelFingerprint, SameFileSameFingerprintInEitherCheck) {
  EXPECT_EQ(of(original), of(write_model(dir + "/again.gguf")));
  EXPECT_EQ(of(original, WeightCheck::Full), of(dir + "/again.gguf", WeightCheck::Full));
  EXPECT_NE(of(original), of(original, WeightCheck::Full));
}

// The first 4 KiB and last 4 KiB of each tensor were all the old fingerprint read: a damaged
// quarter in the middle of the large tensor (a partial download, a bad sector) went unseen.
TEST_F(ModelFingerprint, SampledCatchesAStretchChangedInTheMiddle) {
  const std::string changed =
      changed_copy(original, dir + "/quarter.gguf", "large.weight", 3 * kTensorBytes / 8, kTensorBytes / 4);
  EXPECT_NE(of(original), of(changed));
}

TEST_F(ModelFingerprint, SmallTensorsAreHashedWhole) {
  EXPECT_NE(of(original), of(changed_copy(original, dir + "/small.gguf", "small.weight", 517, 1)));
}

// One byte between the windows: the sampled check cannot see it (that is what it trades for
// speed; this byte lies outside every drawn window), the full hash does.
TEST_F(ModelFingerprint, FullCatchesOneByteTheSamplesMiss) {
  uint64_t at = kTensorBytes / 2;
  std::string changed;
  // The first of a few candidate bytes that no window covers (the windows cover 1/64 of it).
  for (;; at += 4096 * 7) {
    changed = changed_copy(original, dir + "/byte.gguf", "large.weight", at, 1);
    if (of(original) == of(changed)) break;
    ASSERT_LT(at, kTensorBytes / 2 + 20 * 4096 * 7) << "every candidate byte lay in a window";
  }
  EXPECT_NE(of(original, WeightCheck::Full), of(changed, WeightCheck::Full));
}

TEST(WeightCheckNames, NamesAndErrors) {
  EXPECT_EQ(weight_check("sampled"), WeightCheck::Sampled);
  EXPECT_EQ(weight_check("full"), WeightCheck::Full);
  EXPECT_STREQ(weight_check_name(WeightCheck::Full), "full");
  EXPECT_EQ(test::error_of([] { weight_check("all"); }), "--verify-weights all: give sampled, full");
}

}  // namespace
}  // namespace r1pi
