// The GGUF layer: ggml type geometry, metadata values, the streaming writer and the validating
// reader on good files (malformed ones: test_gguf_malformed.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "ggml/ggml_type.h"
#include "gguf_hand_made.h"
#include "test_support.h"

namespace r1pi {
namespace {

using namespace test;


// ---------------------------------------------------------------------------------------------
// ggml types

TEST(GgmlType, BlockGeometryAndNames) {
  EXPECT_EQ(ggml_block_elements(GgmlType::F32), 1u);
  EXPECT_EQ(ggml_block_bytes(GgmlType::F32), 4u);
  EXPECT_EQ(ggml_block_elements(GgmlType::F16), 1u);
  EXPECT_EQ(ggml_block_bytes(GgmlType::F16), 2u);
  EXPECT_EQ(ggml_block_elements(GgmlType::Q4_0), 32u);
  EXPECT_EQ(ggml_block_bytes(GgmlType::Q4_0), 18u);
  EXPECT_EQ(ggml_block_elements(GgmlType::Q8_0), 32u);
  EXPECT_EQ(ggml_block_bytes(GgmlType::Q8_0), 34u);
  EXPECT_EQ(ggml_block_elements(GgmlType::Q6_K), 256u);
  EXPECT_EQ(ggml_block_bytes(GgmlType::Q6_K), 210u);

  EXPECT_EQ(ggml_row_bytes(GgmlType::F32, 10), 40u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::F16, 10), 20u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::Q4_0, 4096), 128u * 18);
  EXPECT_EQ(ggml_row_bytes(GgmlType::Q8_0, 64), 68u);
  EXPECT_EQ(ggml_row_bytes(GgmlType::Q6_K, 4096), 16u * 210);
  EXPECT_THROW(ggml_row_bytes(GgmlType::Q4_0, 33), std::invalid_argument);

  EXPECT_EQ(ggml_type_name(GgmlType::Q6_K), "Q6_K");
  EXPECT_EQ(ggml_type_name(GgmlType::F16), "F16");
  EXPECT_EQ(ggml_type_id_name(12), "Q4_K");
  EXPECT_EQ(ggml_type_id_name(30), "BF16");
  EXPECT_EQ(ggml_type_id_name(4), "");
  EXPECT_EQ(ggml_type_id_name(1000), "");

  for (uint32_t id : {0u, 1u, 2u, 3u, 6u, 7u, 8u, 10u, 11u, 12u, 13u, 14u, 20u, 23u, 30u})
    EXPECT_TRUE(ggml_type_supported(id)) << id;
  // Q8_1 and Q8_K (activation types), IQ2_XXS, IQ3_S, TQ1_0, and ids ggml never assigned.
  for (uint32_t id : {9u, 15u, 16u, 21u, 34u, 1000u}) EXPECT_FALSE(ggml_type_supported(id)) << id;
}

// ---------------------------------------------------------------------------------------------
// Values

TEST(GgufValue, FactoriesAndKinds) {
  EXPECT_EQ(GgufValue::u32(5).type, GgufValueType::UINT32);
  EXPECT_EQ(GgufValue::u32(5).u, 5u);
  EXPECT_EQ(GgufValue::i32(-5).i, -5);
  EXPECT_EQ(GgufValue::u64(1ull << 40).u, 1ull << 40);
  EXPECT_EQ(GgufValue::f32(0.25f).f, 0.25);
  EXPECT_EQ(GgufValue::boolean(true).u, 1u);
  EXPECT_EQ(GgufValue::string("x").s, "x");
  GgufValue tokens = GgufValue::string_array({"a", "b"});
  EXPECT_EQ(tokens.array_type, GgufValueType::STRING);
  ASSERT_EQ(tokens.array.size(), 2u);
  EXPECT_EQ(tokens.array[1].s, "b");
  EXPECT_EQ(GgufValue::i32_array({1, -2}).array[1].i, -2);
  EXPECT_EQ(GgufValue::f32_array({1.5f}).array_type, GgufValueType::FLOAT32);

  EXPECT_TRUE(signed_value(GgufValueType::INT8, 1).is_integer());
  EXPECT_TRUE(GgufValue::u64(1).is_integer());
  EXPECT_FALSE(GgufValue::boolean(true).is_integer());
  EXPECT_FALSE(GgufValue::f32(1).is_integer());
  EXPECT_TRUE(f64_value(1).is_float());
  EXPECT_FALSE(GgufValue::u32(1).is_float());
  EXPECT_EQ(gguf_value_type_name(GgufValueType::FLOAT64), "FLOAT64");
}

TEST(GgufValue, DisplayStrings) {
  EXPECT_EQ(GgufValue::u32(42).to_display_string(), "42");
  EXPECT_EQ(signed_value(GgufValueType::INT64, -3).to_display_string(), "-3");
  EXPECT_EQ(GgufValue::f32(1e-5f).to_display_string(), "1e-05");
  EXPECT_EQ(GgufValue::f32(500000.0f).to_display_string(), "500000");
  EXPECT_EQ(f64_value(0.1).to_display_string(), "0.1");
  EXPECT_EQ(f64_value(-2.5e300).to_display_string(), "-2.5e+300");
  EXPECT_EQ(GgufValue::f32(0).to_display_string(), "0");
  EXPECT_EQ(GgufValue::boolean(false).to_display_string(), "false");
  EXPECT_EQ(GgufValue::string("a\"b\\c\nd\te\x01").to_display_string(),
            "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  EXPECT_EQ(GgufValue::string_array({}).to_display_string(), "[]");
  EXPECT_EQ(GgufValue::i32_array({1, 2, 3}).to_display_string(), "[1, 2, 3]");
  EXPECT_EQ(GgufValue::i32_array({1, 2, 3, 4, 5}).to_display_string(3), "[1, 2, 3, ... (5 items)]");
  EXPECT_EQ(GgufValue::i32_array({1, 2}).to_display_string(0), "[... (2 items)]");
  GgufValue nested = array_value(GgufValueType::ARRAY,
                                 {GgufValue::string_array({"x"}), GgufValue::string_array({})});
  EXPECT_EQ(nested.to_display_string(), "[[\"x\"], []]");
}

// ---------------------------------------------------------------------------------------------
// Writing and reading back

TEST_F(GgufTest, RoundTripsEveryValueType) {
  std::vector<std::pair<std::string, GgufValue>> values = {
      {"t.u8", unsigned_value(GgufValueType::UINT8, 255)},
      {"t.i8", signed_value(GgufValueType::INT8, -128)},
      {"t.u16", unsigned_value(GgufValueType::UINT16, 65535)},
      {"t.i16", signed_value(GgufValueType::INT16, -32768)},
      {"t.u32", GgufValue::u32(4294967295u)},
      {"t.i32", GgufValue::i32(INT32_MIN)},
      {"t.u64", GgufValue::u64(UINT64_MAX)},
      {"t.i64", signed_value(GgufValueType::INT64, INT64_MIN)},
      {"t.f32", GgufValue::f32(1e-5f)},
      {"t.f64", f64_value(0.1)},
      {"t.bool.true", GgufValue::boolean(true)},
      {"t.bool.false", GgufValue::boolean(false)},
      {"t.string", GgufValue::string(std::string("h\xc3\xa9llo\n\t\"q\"\0end", 15))},
      {"t.string.empty", GgufValue::string("")},
      {"t.array.empty", array_value(GgufValueType::UINT8, {})},
      {"t.array.strings", GgufValue::string_array({"a", "", "ccc"})},
      {"t.array.f32", GgufValue::f32_array({1.5f, -0.0f, 3e38f})},
      {"t.array.i32", GgufValue::i32_array({INT32_MIN, 0, INT32_MAX})},
      {"t.array.bool",
       array_value(GgufValueType::BOOL, {GgufValue::boolean(true), GgufValue::boolean(false)})},
      {"t.array.f64", array_value(GgufValueType::FLOAT64, {f64_value(1e300), f64_value(-2.5)})},
      {"t.array.i64", array_value(GgufValueType::INT64, {signed_value(GgufValueType::INT64, -1)})},
      {"t.array.u16",
       array_value(GgufValueType::UINT16, {unsigned_value(GgufValueType::UINT16, 7)})},
      {"t.array.of.string.arrays",
       array_value(GgufValueType::ARRAY,
                   {GgufValue::string_array({"x", "yy"}), GgufValue::string_array({}),
                    GgufValue::string_array({""})})},
      {"t.array.three.levels",
       array_value(GgufValueType::ARRAY,
                   {array_value(GgufValueType::ARRAY,
                                {GgufValue::i32_array({1, 2}), GgufValue::i32_array({})}),
                    array_value(GgufValueType::ARRAY, {})})},
  };
  std::string p = path("values.gguf");
  GgufWriter w;
  for (const auto& [key, value] : values) w.add(key, value);
  w.open(p);
  w.close();

  GgufFile file = GgufFile::open(p);
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.alignment(), 32u);
  EXPECT_TRUE(file.tensors().empty());
  ASSERT_EQ(file.metadata().size(), values.size());
  for (size_t k = 0; k < values.size(); ++k) {
    EXPECT_EQ(file.metadata()[k].first, values[k].first);
    EXPECT_TRUE(same_value(file.metadata()[k].second, values[k].second))
        << values[k].first << ": " << file.metadata()[k].second.to_display_string(100);
  }
  EXPECT_TRUE(file.has("t.u8"));
  EXPECT_FALSE(file.has("t.nope"));
  EXPECT_EQ(file.find("t.nope"), nullptr);
}

TEST_F(GgufTest, TensorBytesSurviveChunkedWriting) {
  struct Declared {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type;
    uint64_t n_bytes;
  };
  std::vector<Declared> declared = {
      {"f32", {5, 3}, GgmlType::F32, 60},
      {"f16", {7}, GgmlType::F16, 14},
      {"q4", {64, 2}, GgmlType::Q4_0, 2 * 2 * 18},
      {"q8", {32, 3, 2}, GgmlType::Q8_0, 6 * 34},
      {"q6", {256, 1, 1, 2}, GgmlType::Q6_K, 2 * 210},
  };
  std::string p = path("tensors.gguf");
  GgufWriter w;
  w.add("general.architecture", GgufValue::string("llama"));
  uint64_t total = 0;
  for (const Declared& d : declared) {
    w.add_tensor(d.name, d.ne, d.type);
    total += d.n_bytes;
  }
  EXPECT_EQ(w.tensor_count(), declared.size());
  std::mt19937 rng(7);
  std::vector<uint8_t> data(total);
  for (uint8_t& byte : data) byte = static_cast<uint8_t>(rng());
  w.open(p);
  // 7-byte chunks cross every tensor boundary at an odd place.
  for (size_t at = 0; at < data.size(); at += 7) {
    w.write_data(data.data() + at, std::min<size_t>(7, data.size() - at));
  }
  w.close();

  GgufFile file = GgufFile::open(p);
  EXPECT_EQ(file.data_offset() % 32, 0u);
  EXPECT_EQ(file.file_size(), std::filesystem::file_size(p));
  ASSERT_EQ(file.tensors().size(), declared.size());
  uint64_t consumed = 0;
  for (size_t k = 0; k < declared.size(); ++k) {
    const GgufTensorInfo& t = file.tensors()[k];
    EXPECT_EQ(t.name, declared[k].name);
    EXPECT_EQ(t.ne, declared[k].ne);
    EXPECT_EQ(t.type, declared[k].type);
    EXPECT_EQ(t.n_bytes, declared[k].n_bytes);
    EXPECT_EQ(t.offset % 32, 0u);
    EXPECT_EQ(t.n_bytes, ggml_row_bytes(t.type, t.ne[0]) * t.rows());
    EXPECT_EQ(file.find_tensor(t.name), &t);
    EXPECT_EQ(std::memcmp(file.tensor_data(t), data.data() + consumed, t.n_bytes), 0) << t.name;
    consumed += t.n_bytes;
  }
  EXPECT_EQ(file.tensors()[3].rows(), 6u);
  EXPECT_EQ(file.tensors()[3].n_elements, 192u);
  EXPECT_EQ(file.find_tensor("missing"), nullptr);
}

TEST_F(GgufTest, OtherAlignmentsAreWrittenAndHonoured) {
  for (uint32_t alignment : {1u, 64u, 4096u}) {
    std::string p = path("aligned" + std::to_string(alignment) + ".gguf");
    GgufWriter w(alignment);
    w.add("general.name", GgufValue::string("x"));
    w.add_tensor("a", {3}, GgmlType::F32);
    w.add_tensor("b", {5}, GgmlType::F16);
    w.open(p);
    std::vector<uint8_t> data(12 + 10, 0xab);
    w.write_data(data.data(), data.size());
    w.close();

    GgufFile file = GgufFile::open(p);
    EXPECT_EQ(file.alignment(), alignment);
    EXPECT_EQ(file.get_u32("general.alignment"), alignment);
    EXPECT_EQ(file.data_offset() % alignment, 0u);
    EXPECT_EQ(file.tensors()[1].offset, (12 + alignment - 1) / alignment * alignment);
    EXPECT_EQ(file.tensor_data(file.tensors()[1])[9], 0xab);
  }
  // The default alignment is not written out.
  std::string p = path("default.gguf");
  GgufWriter w;
  w.open(p);
  w.close();
  EXPECT_FALSE(GgufFile::open(p).has("general.alignment"));
}

TEST_F(GgufTest, ReadsHandMadeFileWithAlignment16) {
  HandMade f = small_valid();
  f.kvs.push_back(kv_u32("general.alignment", 16));
  f.alignment = 16;
  f.tensors[1].offset = 48;
  f.data_bytes = 48 + 68;
  std::string p = path("a16.gguf");
  write_file(p, f.build());
  GgufFile file = GgufFile::open(p);
  EXPECT_EQ(file.alignment(), 16u);
  EXPECT_EQ(file.data_offset() % 16, 0u);
  EXPECT_EQ(file.tensor_data(file.tensors()[1])[0], static_cast<uint8_t>(48 * 7 + 1));
}

TEST_F(GgufTest, ReadsVersion2) {
  HandMade f = small_valid();
  f.version = 2;
  std::string p = path("v2.gguf");
  write_file(p, f.build());
  GgufFile file = GgufFile::open(p);
  EXPECT_EQ(file.version(), 2u);
  EXPECT_EQ(file.get_string("general.architecture"), "llama");
  EXPECT_EQ(file.get_u32("llama.block_count"), 1u);
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.tensors()[1].type, GgmlType::Q8_0);
  EXPECT_EQ(file.tensors()[1].n_bytes, 68u);
  EXPECT_EQ(file.tensor_data(file.tensors()[1])[0], static_cast<uint8_t>(32 * 7 + 1));
}

TEST_F(GgufTest, ReleaseKeepsMetadataAndStopsDataAccess) {
  std::string p = write_varied_file("varied.gguf");
  GgufFile file = GgufFile::open(p);
  GgufFile moved = std::move(file);
  EXPECT_TRUE(moved.mapped());
  EXPECT_EQ(moved.tensor_data(moved.tensors()[0])[1], 1);
  moved.release();
  EXPECT_FALSE(moved.mapped());
  EXPECT_EQ(moved.get_string("general.architecture"), "llama");
  EXPECT_EQ(moved.tensors().size(), 3u);
  expect_error(p, "released", [&] { moved.tensor_data(moved.tensors()[0]); });
}

// ---------------------------------------------------------------------------------------------
// Typed getters

TEST_F(GgufTest, GettersConvertWhatFitsAndNameKeyAndFileOtherwise) {
  std::string p = path("getters.gguf");
  GgufWriter w;
  w.add("u8", unsigned_value(GgufValueType::UINT8, 200));
  w.add("neg", GgufValue::i32(-5));
  w.add("big", GgufValue::u64(1ull << 40));
  w.add("huge", GgufValue::u64(UINT64_MAX));
  w.add("f32", GgufValue::f32(0.5f));
  w.add("f64", f64_value(0.25));
  w.add("yes", GgufValue::boolean(true));
  w.add("str", GgufValue::string("text"));
  w.add("strs", GgufValue::string_array({"a", "b"}));
  w.add("floats", GgufValue::f32_array({1.0f, 2.0f}));
  w.add("doubles", array_value(GgufValueType::FLOAT64, {f64_value(3.0)}));
  w.add("u32s", array_value(GgufValueType::UINT32, {GgufValue::u32(1), GgufValue::u32(2)}));
  w.add("i8s", array_value(GgufValueType::INT8, {signed_value(GgufValueType::INT8, -1)}));
  w.add("u32s.big", array_value(GgufValueType::UINT32, {GgufValue::u32(1u << 31)}));
  w.open(p);
  w.close();
  GgufFile f = GgufFile::open(p);

  EXPECT_EQ(f.get_u32("u8"), 200u);
  EXPECT_EQ(f.get_u64("u8"), 200u);
  EXPECT_EQ(f.get_i64("u8"), 200);
  EXPECT_EQ(f.get_i64("neg"), -5);
  EXPECT_EQ(f.get_u64("big"), 1ull << 40);
  EXPECT_EQ(f.get_f32("f32"), 0.5f);
  EXPECT_EQ(f.get_f32("f64"), 0.25f);
  EXPECT_TRUE(f.get_bool("yes"));
  EXPECT_EQ(f.get_string("str"), "text");
  EXPECT_EQ(f.get_string_array("strs"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.get_f32_array("floats"), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(f.get_f32_array("doubles"), (std::vector<float>{3.0f}));
  EXPECT_EQ(f.get_i32_array("u32s"), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(f.get_i32_array("i8s"), (std::vector<int32_t>{-1}));

  EXPECT_EQ(f.try_string("str"), "text");
  EXPECT_EQ(f.try_u64("u8"), 200u);
  EXPECT_EQ(f.try_f32("f32"), 0.5f);
  EXPECT_EQ(f.try_bool("yes"), true);
  EXPECT_EQ(f.try_string("absent"), std::nullopt);
  EXPECT_EQ(f.try_u64("absent"), std::nullopt);
  EXPECT_EQ(f.try_f32("absent"), std::nullopt);
  EXPECT_EQ(f.try_bool("absent"), std::nullopt);

  expect_error(p, "'absent' is missing", [&] { f.get_string("absent"); });
  expect_error(p, "'absent' is missing", [&] { f.get_u32("absent"); });
  expect_error(p, "'absent' is missing", [&] { f.get_i64("absent"); });
  expect_error(p, "'absent' is missing", [&] { f.get_f32("absent"); });
  expect_error(p, "'absent' is missing", [&] { f.get_bool("absent"); });
  expect_error(p, "'absent' is missing", [&] { f.get_string_array("absent"); });
  expect_error(p, "'absent' is missing", [&] { f.get_f32_array("absent"); });
  expect_error(p, "'absent' is missing", [&] { f.get_i32_array("absent"); });

  expect_error(p, "'u8' has type UINT8, expected STRING", [&] { f.get_string("u8"); });
  expect_error(p, "'u8' has type UINT8, expected STRING", [&] { f.try_string("u8"); });
  expect_error(p, "'str' has type STRING, expected an integer", [&] { f.get_u64("str"); });
  expect_error(p, "'u8' has type UINT8, expected FLOAT32 or FLOAT64", [&] { f.get_f32("u8"); });
  expect_error(p, "'u8' has type UINT8, expected BOOL", [&] { f.try_bool("u8"); });
  expect_error(p, "'floats' has type ARRAY of FLOAT32", [&] { f.get_string_array("floats"); });
  expect_error(p, "'strs' has type ARRAY of STRING", [&] { f.get_i32_array("strs"); });
  expect_error(p, "'str' has type STRING", [&] { f.get_f32_array("str"); });

  expect_error(p, "'neg' value -5 does not fit", [&] { f.get_u64("neg"); });
  expect_error(p, "'big' value 1099511627776 does not fit uint32", [&] { f.get_u32("big"); });
  expect_error(p, "'huge' value 18446744073709551615 does not fit int64",
               [&] { f.get_i64("huge"); });
  expect_error(p, "'u32s.big' value 2147483648 does not fit int32",
               [&] { f.get_i32_array("u32s.big"); });
}

// ---------------------------------------------------------------------------------------------
// Writer misuse

TEST_F(GgufTest, WriterRefusesBadDeclarations) {
  for (uint32_t alignment : {0u, 3u, 48u}) EXPECT_THROW(GgufWriter{alignment}, Error) << alignment;
  GgufWriter w;
  w.add("k", GgufValue::u32(1));
  EXPECT_THROW(w.add("k", GgufValue::u32(2)), Error);
  EXPECT_THROW(w.add("general.alignment", GgufValue::u32(64)), Error);
  EXPECT_THROW(
      w.add("mixed", array_value(GgufValueType::UINT32, {GgufValue::u32(1), GgufValue::i32(1)})),
      Error);
  EXPECT_THROW(w.add("wide", unsigned_value(GgufValueType::UINT8, 256)), Error);
  EXPECT_THROW(w.add("bool", unsigned_value(GgufValueType::BOOL, 2)), Error);
  EXPECT_THROW(w.add_tensor("t", {}, GgmlType::F32), Error);
  EXPECT_THROW(w.add_tensor("t", {1, 1, 1, 1, 1}, GgmlType::F32), Error);
  EXPECT_THROW(w.add_tensor("t", {4, 0}, GgmlType::F32), Error);
  EXPECT_THROW(w.add_tensor("t", {33}, GgmlType::Q4_0), Error);
  EXPECT_THROW(w.add_tensor("t", {8}, static_cast<GgmlType>(11)), Error);
  w.add_tensor("t", {8}, GgmlType::F32);
  EXPECT_THROW(w.add_tensor("t", {8}, GgmlType::F32), Error);
  EXPECT_THROW(w.write_data("x", 1), Error);
  EXPECT_THROW(w.close(), Error);
}

TEST_F(GgufTest, WriterRefusesMisuseAfterOpen) {
  std::string p = path("after-open.gguf");
  GgufWriter w;
  w.add_tensor("t", {2}, GgmlType::F32);
  w.open(p);
  expect_error(p, "after open()", [&] { w.add("k", GgufValue::u32(1)); });
  expect_error(p, "after open()", [&] { w.add_tensor("u", {2}, GgmlType::F32); });
  expect_error(p, "twice", [&] { w.open(p); });
  std::vector<uint8_t> nine(9);
  expect_error(p, "more tensor data", [&] { w.write_data(nine.data(), nine.size()); });
}

TEST_F(GgufTest, WriterRemovesIncompleteFiles) {
  std::string p = path("incomplete.gguf");
  {
    GgufWriter w;
    w.add_tensor("a", {4}, GgmlType::F32);
    w.add_tensor("b", {32}, GgmlType::F32);
    w.open(p);
    std::vector<uint8_t> data(16 + 100);
    w.write_data(data.data(), data.size());
    expect_error(p, "tensor 'b' got 100 of its 128 bytes", [&] { w.close(); });
  }
  EXPECT_FALSE(std::filesystem::exists(p));
  {
    GgufWriter w;
    w.add_tensor("a", {4}, GgmlType::F32);
    w.open(p);
    EXPECT_FALSE(std::filesystem::exists(p));  // a temporary beside it until close()
  }  // destroyed without close(), as when an exception unwinds
  EXPECT_FALSE(std::filesystem::exists(p));
}

TEST_F(GgufTest, WriterNamesUncreatablePath) {
  std::string p = path("no/such/dir/x.gguf");
  GgufWriter w;
  expect_error(p, "cannot create", [&] { w.open(p); });
}

}  // namespace
}  // namespace r1pi
