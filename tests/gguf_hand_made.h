// GGUF files laid out by hand, field by field, so that a test can break any one of them, and the
// fixture the GGUF tests share (a scratch folder of their own).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "test_support.h"

namespace r1pi::test {

// Little-endian bytes, for files written by hand (GGUF v2, and deliberately broken ones).
struct Bytes {
  std::vector<uint8_t> data;

  template <typename T>
  Bytes& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    data.insert(data.end(), p, p + sizeof v);
    return *this;
  }
  Bytes& u32(uint32_t v) { return put(v); }
  Bytes& u64(uint64_t v) { return put(v); }
  Bytes& str(const std::string& s) {
    u64(s.size());
    data.insert(data.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& append(const Bytes& other) {
    data.insert(data.end(), other.data.begin(), other.data.end());
    return *this;
  }
  Bytes& zeros(size_t n) {
    data.resize(data.size() + n, 0);
    return *this;
  }
};

inline Bytes kv(const std::string& key, uint32_t type, const Bytes& payload) {
  return Bytes().str(key).u32(type).append(payload);
}
inline Bytes kv_u32(const std::string& key, uint32_t v) { return kv(key, 4, Bytes().u32(v)); }
inline Bytes kv_string(const std::string& key, const std::string& v) { return kv(key, 8, Bytes().str(v)); }

struct HandTensor {
  std::string name;
  std::vector<uint64_t> ne;
  uint32_t type;
  uint64_t offset;
};

// A GGUF file laid out by hand, field by field, so that a test can break any one of them.
struct HandMade {
  std::string magic = "GGUF";
  uint32_t version = 3;
  std::optional<uint64_t> n_tensors;  // override the true counts
  std::optional<uint64_t> n_kv;
  std::vector<Bytes> kvs;
  std::vector<HandTensor> tensors;
  uint64_t alignment = 32;  // where the data section starts
  uint64_t data_bytes = 0;

  std::vector<uint8_t> build() const {
    Bytes b;
    b.data.assign(magic.begin(), magic.end());
    b.u32(version).u64(n_tensors.value_or(tensors.size())).u64(n_kv.value_or(kvs.size()));
    for (const Bytes& entry : kvs) b.append(entry);
    for (const HandTensor& t : tensors) {
      b.str(t.name).u32(static_cast<uint32_t>(t.ne.size()));
      for (uint64_t n : t.ne) b.u64(n);
      b.u32(t.type).u64(t.offset);
    }
    b.zeros((alignment - b.data.size() % alignment) % alignment);
    for (uint64_t k = 0; k < data_bytes; ++k) b.data.push_back(static_cast<uint8_t>(k * 7 + 1));
    return b.data;
  }
};

// Two metadata keys, an F32 vector of 8 (32 bytes at 0) and a 32x2 Q8_0 matrix (68 bytes at 32).
inline HandMade small_valid() {
  HandMade f;
  f.kvs = {kv_string("general.architecture", "llama"), kv_u32("llama.block_count", 1)};
  f.tensors = {{"a", {8}, 0, 0}, {"b", {32, 2}, 8, 32}};
  f.data_bytes = 32 + 68;
  return f;
}

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs `action`, which must throw r1pi::Error with a message starting "<path>: " and containing
// `needle`.
template <typename Action>
void expect_error(const std::string& path, const std::string& needle, Action action) {
  try {
    action();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
}

inline void expect_open_error(const std::string& path, const std::string& needle) {
  expect_error(path, needle, [&] { GgufFile::open(path); });
}

// Values of a given type, for the round-trip and getter tests.
inline GgufValue of_type(GgufValueType type) {
  GgufValue v;
  v.type = type;
  return v;
}
inline GgufValue unsigned_value(GgufValueType type, uint64_t u) {
  GgufValue v = of_type(type);
  v.u = u;
  return v;
}
inline GgufValue signed_value(GgufValueType type, int64_t i) {
  GgufValue v = of_type(type);
  v.i = i;
  return v;
}
inline GgufValue f64_value(double f) {
  GgufValue v = of_type(GgufValueType::FLOAT64);
  v.f = f;
  return v;
}
inline GgufValue array_value(GgufValueType element_type, std::vector<GgufValue> items) {
  GgufValue v = of_type(GgufValueType::ARRAY);
  v.array_type = element_type;
  v.array = std::move(items);
  return v;
}

// Exact equality of the field each type keeps its value in, recursively.
inline bool same_value(const GgufValue& a, const GgufValue& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case GgufValueType::UINT8:
    case GgufValueType::UINT16:
    case GgufValueType::UINT32:
    case GgufValueType::UINT64:
    case GgufValueType::BOOL: return a.u == b.u;
    case GgufValueType::INT8:
    case GgufValueType::INT16:
    case GgufValueType::INT32:
    case GgufValueType::INT64: return a.i == b.i;
    case GgufValueType::FLOAT32:
    case GgufValueType::FLOAT64: return std::memcmp(&a.f, &b.f, sizeof a.f) == 0;
    case GgufValueType::STRING: return a.s == b.s;
    case GgufValueType::ARRAY:
      if (a.array_type != b.array_type || a.array.size() != b.array.size()) return false;
      for (size_t k = 0; k < a.array.size(); ++k) {
        if (!same_value(a.array[k], b.array[k])) return false;
      }
      return true;
  }
  return false;
}

class GgufTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir(std::string("gguf-") +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Writes a hand-made file and expects open() to refuse it with `needle` in the message.
  void expect_refused(const HandMade& file, const std::string& needle) {
    std::string p = path("bad.gguf");
    write_file(p, file.build());
    expect_open_error(p, needle);
  }

  // A small file from the writer with one of each kind of metadata and three tensors.
  std::string write_varied_file(const std::string& name) {
    std::string p = path(name);
    GgufWriter w;
    w.add("general.architecture", GgufValue::string("llama"));
    w.add("count", GgufValue::u32(7));
    w.add("eps", GgufValue::f32(1e-5f));
    w.add("flag", GgufValue::boolean(true));
    w.add("tokens", GgufValue::string_array({"a", "", "<s>"}));
    w.add("scores", GgufValue::f32_array({0.5f, -1.0f}));
    w.add("nested", array_value(GgufValueType::ARRAY, {GgufValue::string_array({"x", "y"}),
                                                       GgufValue::string_array({})}));
    w.add_tensor("v", {8}, GgmlType::F32);
    w.add_tensor("m", {32, 2}, GgmlType::Q8_0);
    w.add_tensor("h", {4}, GgmlType::F16);
    w.open(p);
    std::vector<uint8_t> data(32 + 68 + 8);
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(k);
    w.write_data(data.data(), data.size());
    w.close();
    return p;
  }

  std::string dir_;
};

}  // namespace r1pi::test
