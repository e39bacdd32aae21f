// The validating GGUF reader on malformed files: each must be refused with a message naming the
// file and the problem, never a crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "gguf_hand_made.h"

namespace r1pi {
namespace {

using namespace test;

// ---------------------------------------------------------------------------------------------
// Malformed files: each must be refused with a message naming the file and the problem.

TEST_F(GgufTest, RefusesMissingFile) { expect_open_error(path("absent.gguf"), "cannot open"); }

TEST_F(GgufTest, RefusesDirectory) { expect_open_error(dir_, "not a regular file"); }

TEST_F(GgufTest, RefusesEmptyFile) {
  std::string p = path("empty.gguf");
  write_file(p, {});
  expect_open_error(p, "empty file");
}

TEST_F(GgufTest, RefusesTinyFile) {
  std::string p = path("tiny.gguf");
  write_file(p, {'G', 'G', 'U'});
  expect_open_error(p, "too small");
}

TEST_F(GgufTest, RefusesWrongMagic) {
  HandMade f = small_valid();
  f.magic = "GGML";
  expect_refused(f, "not a GGUF file");
}

TEST_F(GgufTest, RefusesVersion1) {
  HandMade f = small_valid();
  f.version = 1;
  expect_refused(f, "GGUF version 1 is not supported");
}

TEST_F(GgufTest, RefusesVersion99) {
  HandMade f = small_valid();
  f.version = 99;
  expect_refused(f, "unsupported GGUF version 99");
}

TEST_F(GgufTest, RefusesBigEndianFile) {
  HandMade f = small_valid();
  f.version = 0x03000000;
  expect_refused(f, "big-endian");
}

TEST_F(GgufTest, RefusesEveryTruncation) {
  std::string p = write_varied_file("full.gguf");
  std::vector<uint8_t> full = read_bytes(p);
  GgufFile file = GgufFile::open(p);
  uint64_t data_end = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    data_end = std::max(data_end, t.offset + t.n_bytes);
  }
  data_end += file.data_offset();
  ASSERT_LE(data_end, full.size());
  std::string cut = path("cut.gguf");
  for (size_t length = 0; length < data_end; ++length) {
    write_file(cut, std::vector<uint8_t>(full.begin(), full.begin() + length));
    EXPECT_THROW(GgufFile::open(cut), Error) << "length " << length;
  }
  // Cutting only the padding after the last tensor loses nothing.
  for (size_t length = data_end; length <= full.size(); ++length) {
    write_file(cut, std::vector<uint8_t>(full.begin(), full.begin() + length));
    EXPECT_NO_THROW(GgufFile::open(cut)) << "length " << length;
  }
}

TEST_F(GgufTest, RefusesHugeStringLength) {
  HandMade f = small_valid();
  f.kvs.push_back(Bytes().str("k").u32(8).u64(1ull << 60));
  expect_refused(f, "metadata key 'k' has a string length of 1152921504606846976");
}

TEST_F(GgufTest, RefusesHugeKeyLength) {
  HandMade f = small_valid();
  f.kvs.insert(f.kvs.begin(), Bytes().u64(UINT64_MAX));
  expect_refused(f, "metadata entry 0 has a string length");
}

TEST_F(GgufTest, RefusesHugeTensorNameLength) {
  HandMade f = small_valid();
  f.tensors[0].name = std::string(40, 'n');
  std::vector<uint8_t> bytes = f.build();
  // Overwrite the name's length field (just before the 40 'n's) with an absurd one.
  auto at = std::search_n(bytes.begin(), bytes.end(), 40, 'n') - 8;
  uint64_t huge = 1ull << 62;
  std::memcpy(&*at, &huge, sizeof huge);
  std::string p = path("bad.gguf");
  write_file(p, bytes);
  expect_open_error(p, "tensor info 0 has a string length");
}

TEST_F(GgufTest, RefusesHugeArrayCounts) {
  for (uint32_t element_type : {4u /*UINT32*/, 8u /*STRING*/, 9u /*ARRAY*/}) {
    HandMade f = small_valid();
    f.kvs.push_back(Bytes().str("k").u32(9).u32(element_type).u64(1ull << 60));
    expect_refused(f, "metadata key 'k' has an array of 1152921504606846976");
  }
}

TEST_F(GgufTest, RefusesHugeTensorCount) {
  HandMade f = small_valid();
  f.n_tensors = 1ull << 62;
  expect_refused(f, "the header claims 4611686018427387904 tensors");
}

TEST_F(GgufTest, RefusesHugeMetadataCount) {
  HandMade f = small_valid();
  f.n_kv = UINT64_MAX;
  expect_refused(f, "the header claims 18446744073709551615 metadata entries");
}

// A count one too high used to show only its symptom: the padding read as a tensor info,
// "tensor '' has 0 dimensions". The message now names the counts (one too low for the metadata
// reads the last entry as a tensor info).
TEST_F(GgufTest, HeaderCountsThatDisagreeWithTheFileAreNamed) {
  HandMade tensors = small_valid();
  tensors.n_tensors = 3;
  expect_refused(tensors, "(in tensor info 2; the header counts 2 metadata entries and 3 tensors, and a "
                          "wrong count misreads what follows it)");
  HandMade metadata = small_valid();
  metadata.n_kv = 1;
  expect_refused(metadata, "(in tensor info 0; the header counts 1 metadata entries and 2 tensors");
}

TEST_F(GgufTest, RefusesUnknownValueType) {
  HandMade f = small_valid();
  f.kvs.push_back(kv("k", 13, Bytes().u32(0)));
  expect_refused(f, "metadata key 'k' has unknown value type 13");
}

TEST_F(GgufTest, RefusesUnknownArrayElementType) {
  HandMade f = small_valid();
  f.kvs.push_back(kv("k", 9, Bytes().u32(77).u64(0)));
  expect_refused(f, "metadata key 'k' has unknown array element type 77");
}

TEST_F(GgufTest, RefusesBadBoolean) {
  HandMade f = small_valid();
  f.kvs.push_back(kv("k", 7, Bytes().put<uint8_t>(2)));
  expect_refused(f, "metadata key 'k' has boolean byte 2");
}

TEST_F(GgufTest, RefusesAbsurdArrayNesting) {
  HandMade f = small_valid();
  Bytes nested;
  for (int level = 0; level < 40; ++level) nested.u32(9).u64(1);  // ARRAY of one ARRAY ...
  nested.u32(0).u64(0);                                           // ... of no UINT8
  f.kvs.push_back(kv("deep", 9, nested));
  expect_refused(f, "metadata key 'deep' has arrays nested more than");
}

TEST_F(GgufTest, RefusesDuplicateKey) {
  HandMade f = small_valid();
  f.kvs.push_back(kv_u32("llama.block_count", 2));
  expect_refused(f, "duplicate metadata key 'llama.block_count'");
}

TEST_F(GgufTest, RefusesUnknownTensorType) {
  HandMade f = small_valid();
  f.tensors[1].type = 16;
  expect_refused(f, "tensor 'b' has unsupported type 16 (IQ2_XXS)");
  f.tensors[1].type = 4000;
  expect_refused(f, "tensor 'b' has unsupported type 4000");
}

TEST_F(GgufTest, RefusesZeroDimensions) {
  HandMade f = small_valid();
  f.tensors[0].ne = {};
  expect_refused(f, "tensor 'a' has 0 dimensions (1 to 4 allowed)");
}

TEST_F(GgufTest, RefusesFiveDimensions) {
  HandMade f = small_valid();
  f.tensors[0].ne = {8, 1, 1, 1, 1};
  expect_refused(f, "tensor 'a' has 5 dimensions (1 to 4 allowed)");
}

TEST_F(GgufTest, RefusesZeroSizedDimension) {
  HandMade f = small_valid();
  f.tensors[1].ne = {32, 0};
  expect_refused(f, "tensor 'b' has dimension 1 equal to 0");
}

TEST_F(GgufTest, RefusesElementCountOverflow) {
  HandMade f = small_valid();
  f.tensors[0].ne = {1ull << 32, 1ull << 32};
  expect_refused(f, "tensor 'a' has an element count that overflows");
}

TEST_F(GgufTest, RefusesRowNotWholeBlocks) {
  HandMade f = small_valid();
  f.tensors[1].ne = {16, 4};
  expect_refused(f, "tensor 'b' has row length 16, not a multiple of the Q8_0 block size 32");
  f.tensors[1].type = 39;  // MXFP4
  f.tensors[1].ne = {48, 4};
  expect_refused(f, "tensor 'b' has row length 48, not a multiple of the MXFP4 block size 32");
}

TEST_F(GgufTest, RefusesMisalignedOffset) {
  HandMade f = small_valid();
  f.tensors[1].offset = 40;
  expect_refused(f, "tensor 'b' has offset 40, not a multiple of the alignment 32");
}

TEST_F(GgufTest, RefusesTensorBeyondEndOfFile) {
  HandMade f = small_valid();
  f.data_bytes = 99;
  expect_refused(f, "tensor 'b' (68 bytes at data offset 32) extends past the end of the file");
  f.data_bytes = 100;
  f.tensors[1].offset = 1ull << 63;  // aligned, and would wrap a careless offset + size check
  expect_refused(f, "tensor 'b' (68 bytes at data offset 9223372036854775808) extends past");
}

TEST_F(GgufTest, RefusesOverlappingTensors) {
  HandMade f = small_valid();
  f.tensors.push_back({"c", {4}, 0, 64});  // inside b's 32..100
  f.data_bytes = 128;
  expect_refused(f, "tensors 'b' and 'c' overlap");
}

TEST_F(GgufTest, RefusesDuplicateTensorName) {
  HandMade f = small_valid();
  f.tensors[1].name = "a";
  expect_refused(f, "duplicate tensor name 'a'");
}

TEST_F(GgufTest, RefusesBadAlignmentValues) {
  for (uint32_t alignment : {0u, 3u, 96u}) {
    HandMade f = small_valid();
    f.kvs.push_back(kv_u32("general.alignment", alignment));
    expect_refused(
        f, "general.alignment is " + std::to_string(alignment) + ", must be a power of two");
  }
  HandMade f = small_valid();
  f.kvs.push_back(kv("general.alignment", 10, Bytes().u64(32)));
  expect_refused(f, "general.alignment has type UINT64, must be UINT32");
}

// ---------------------------------------------------------------------------------------------
// A file that shrinks while it is mapped: its pages past the new end would raise SIGBUS.

TEST_F(GgufTest, FileTruncatedAfterOpenIsAnErrorBeforeItsPagesAreRead) {
  const std::string p = write_varied_file("shrinks.gguf");
  const GgufFile file = GgufFile::open(p);
  ASSERT_NO_THROW(file.tensor_data(file.tensors()[0]));
  std::filesystem::resize_file(p, file.data_offset());
  expect_error(p, "the file shrank from " + std::to_string(file.file_size()) + " to " +
                      std::to_string(file.data_offset()) + " bytes while r1pi was reading it",
               [&] { file.tensor_data(file.tensors()[0]); });
}

// A truncation between the size check and the copy: the SIGBUS handler prints the error and exits 1.
// A death test re-executes the test program, which qemu runs cannot: *DeathTest suites are left
// out there (scripts/test-aarch64).
using GgufDeathTest = GgufTest;
TEST_F(GgufDeathTest, FileTruncatedDuringACopyEndsWithAnErrorNotASignal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string p = write_varied_file("truncated.gguf");
  EXPECT_EXIT(
      {
        const GgufFile file = GgufFile::open(p);
        const volatile uint8_t* data = file.tensor_data(file.tensors()[0]);
        std::filesystem::resize_file(p, 0);
        std::printf("%d\n", data[0]);  // the page is gone: SIGBUS
      },
      ::testing::ExitedWithCode(1), "error: .*truncated.gguf: the file was truncated or rewritten while r1pi");
}

// Random damage to a valid file must end in a clean load or an r1pi::Error, never a crash. Loaded
// files have all their values rendered and tensor bytes read, so that a bad bound would show.
TEST_F(GgufTest, SurvivesRandomByteFlips) {
  std::string p = write_varied_file("valid.gguf");
  std::vector<uint8_t> valid = read_bytes(p);
  std::string damaged_path = path("damaged.gguf");
  std::mt19937 rng(2024);
  int loaded = 0, refused = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::vector<uint8_t> damaged = valid;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      damaged[rng() % damaged.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    }
    write_file(damaged_path, damaged);
    try {
      GgufFile file = GgufFile::open(damaged_path);
      size_t rendered = 0;
      for (const auto& [key, value] : file.metadata()) rendered += value.to_display_string().size();
      uint32_t checksum = 0;
      for (const GgufTensorInfo& t : file.tensors()) {
        const uint8_t* data = file.tensor_data(t);
        for (uint64_t b = 0; b < t.n_bytes; ++b) checksum += data[b];
      }
      EXPECT_GT(rendered + checksum + 1, 0u);
      ++loaded;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace r1pi
