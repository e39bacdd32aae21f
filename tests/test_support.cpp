#include "test_support.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "layers/model_forward.h"
#include "layers/shard_sync.h"
#include "model/architecture.h"
#include "model/model_loader.h"
#include "ggml/quantize.h"
#include "tools/model_maker.h"

namespace r1pi::test {

std::string shared_data(const std::string& file) {
  const char* env = std::getenv("R1PI_SHARED_DATA");
  std::string dir = env && *env ? env : R1PI_DEFAULT_SHARED_DATA;
  return file.empty() ? dir : dir + "/" + file;
}

std::string bin_dir() { return R1PI_BIN_DIR; }

std::string scratch_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(R1PI_BIN_DIR) / "test-scratch" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  return result;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

ConfigSizes sizes_of(const ModelConfig& c) {
  return {c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.ffn_dim, c.n_vocab, c.n_ctx_train};
}

ModelConfig llama_shape(uint32_t dim, uint32_t n_layers, uint32_t n_heads, uint32_t n_kv_heads,
                        uint32_t ffn_dim, uint32_t n_vocab) {
  ModelConfig c;
  c.arch = find_architecture("llama");
  c.dim = dim;
  c.n_layers = n_layers;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv_heads;
  c.head_dim = dim / n_heads;
  c.rope_dim = c.head_dim;
  c.value_dim = c.head_dim;
  c.ffn_dim = ffn_dim;
  c.n_vocab = n_vocab;
  return c;
}

void PrintTo(const ConfigSizes& s, std::ostream* os) {
  *os << "dim " << s.dim << ", " << s.n_layers << " layers, " << s.n_heads << "/" << s.n_kv_heads
      << " heads, ffn " << s.ffn_dim << ", vocab " << s.n_vocab << ", context " << s.n_ctx_train;
}

std::string make_model_file(const std::string& name, MakeOptions options) {
  const std::string path = scratch_dir(name + "-" + std::to_string(getpid())) + "/model.gguf";
  options.progress = false;
  make_model(options, path);
  return path;
}

const std::string& tiny_model_file(uint32_t seed) {
  static std::map<uint32_t, std::string> paths;
  auto [it, added] = paths.try_emplace(seed);
  if (added) it->second = make_model_file("tiny-seed" + std::to_string(seed), {.preset = "tiny", .seed = seed});
  return it->second;
}

const LoadedModel& tiny_model(uint32_t seed) {
  static std::map<uint32_t, LoadedModel> models;
  auto it = models.find(seed);
  if (it == models.end()) it = models.emplace(seed, load_model(tiny_model_file(seed))).first;
  return it->second;
}

std::vector<float> chunked_logits(const LoadedModel& m, const std::vector<int32_t>& tokens,
                                  int chunk, ThreadPool& pool) {
  NoSync sync;
  const int T = int(tokens.size());
  ModelForward f(m.config, m.weights, m.shard, T, pool, sync);
  std::vector<float> out;
  for (int pos = 0; pos < T; pos += chunk) {
    const int n = std::min(chunk, T - pos);
    const std::vector<float>& lg = f.forward(Batch::run(tokens.data() + pos, n, pos,
                                             n == 1 ? LogitsFor::Last : LogitsFor::All));
    out.insert(out.end(), lg.begin(), lg.end());
  }
  return out;
}

::testing::AssertionResult batched_like_alone(const LoadedModel& m, const std::vector<int32_t>& a,
                                              const std::vector<int32_t>& b, int n_ctx, ThreadPool& pool) {
  NoSync sync;
  auto alone = [&](const std::vector<int32_t>& t) {
    ModelForward f(m.config, m.weights, m.shard, n_ctx, pool, sync);
    return f.forward(Batch::run(t.data(), int(t.size()), 0, LogitsFor::All));
  };
  const std::vector<float> want_a = alone(a), want_b = alone(b);
  ModelForward f(m.config, m.weights, m.shard, n_ctx, pool, sync, GgmlType::F32, 2);
  Batch both;
  both.add_run(a.data(), int(a.size()), 0, 0, LogitsFor::All);
  both.add_run(b.data(), int(b.size()), 1, 0, LogitsFor::All);
  const std::vector<float>& got = f.forward(both);
  if (got.size() != want_a.size() + want_b.size()) return ::testing::AssertionFailure() << "logit counts differ";
  if (std::memcmp(got.data(), want_a.data(), want_a.size() * sizeof(float)) != 0)
    return ::testing::AssertionFailure() << "the first sequence's logits differ from its own alone";
  if (std::memcmp(got.data() + want_a.size(), want_b.data(), want_b.size() * sizeof(float)) != 0)
    return ::testing::AssertionFailure() << "the second sequence's logits differ from its own alone";
  return ::testing::AssertionSuccess();
}

std::vector<int32_t> FakeTokenSource::forward(const Batch& batch, const std::vector<const Sampler*>& samplers) {
  for (int i = 0; i < batch.size(); ++i) {
    std::vector<int32_t>& held = held_.at(size_t(batch.seqs[size_t(i)]));
    const int pos = batch.positions[size_t(i)];
    if (pos < 0 || pos >= n_ctx_) throw Error("fake token source: position " + std::to_string(pos) + " past the context");
    if (pos > int(held.size())) throw Error("fake token source: a gap before position " + std::to_string(pos));
    held.resize(size_t(pos));
    held.push_back(batch.tokens[size_t(i)]);
  }
  ++forwards;
  std::vector<int32_t> picks;
  for (int i = 0; i < batch.size(); ++i)
    if (batch.logits[size_t(i)]) picks.push_back(pick(batch, i, *samplers.at(picks.size())));
  return picks;
}

void FakeTokenSource::truncate(int seq, int n) {
  std::vector<int32_t>& held = held_.at(size_t(seq));
  if (size_t(n) < held.size()) held.resize(size_t(n));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<VocabCase> llama_cpp_vocab_cases(const std::string& name) {
  const std::string inp = read_file(shared_data(name + ".inp"));
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<VocabCase> cases;
  for (size_t begin = 0, end; (end = inp.find(separator, begin)) != std::string::npos;
       begin = end + separator.size()) {
    cases.push_back({inp.substr(begin, end - begin), {}});
  }
  std::istringstream out(read_file(shared_data(name + ".out")));
  std::string line;
  for (VocabCase& c : cases) {
    std::getline(out, line);
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
  }
  return cases;
}

std::vector<float> normal_row(int64_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng);
  return x;
}

std::vector<float> random_row(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  return normal_row(n, rng, scale);
}

std::vector<block_q8_0> quantize_q8_0(const std::vector<float>& x) {
  std::vector<block_q8_0> q(x.size() / 32);
  quantize_row_q8_0_ref(x.data(), q.data(), int64_t(x.size()));
  return q;
}

uint16_t random_half(std::mt19937& rng, bool allow_inf) {
  for (;;) {
    const uint16_t h = uint16_t(rng());
    const bool special = (h & 0x7c00) == 0x7c00;
    if (!special) return h;
    if (allow_inf && (h & 0x3ff) == 0) return h;
  }
}

std::vector<float> dequantized(GgmlType type, const void* blocks, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  ggml_traits(type).dequantize(blocks, y.data(), n);
  return y;
}

void expect_scalar_dot(GgmlType type, int64_t n, const void* w, const std::vector<block_q8_0>& x, float want) {
  const float got = kernels_scalar().types[kernel_type_index(type)].vec_dot(n, w, x.data());
  EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << ggml_type_name(type);
  const std::vector<float> wd = dequantized(type, w, n), xd = dequantized(GgmlType::Q8_0, x.data(), n);
  double exact = 0;
  for (int64_t i = 0; i < n; ++i) exact += double(wd[size_t(i)]) * xd[size_t(i)];
  EXPECT_NEAR(got, exact, 1e-3 * (1 + std::fabs(exact))) << ggml_type_name(type);
}

std::vector<const Kernels*> simd_backends() {
  std::vector<const Kernels*> v;
  for (const Kernels* k : available_backends())
    if (k != &kernels_scalar()) v.push_back(k);
  return v;
}

::testing::AssertionResult same_floats(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (bits_of(a[i]) != bits_of(b[i])) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "element %zu of %zu: %.9g (0x%08x) vs scalar %.9g (0x%08x)", i,
                    n, double(a[i]), unsigned(bits_of(a[i])), double(b[i]), unsigned(bits_of(b[i])));
      return ::testing::AssertionFailure() << msg;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_bytes(const void* a, const void* b, size_t n) {
  const uint8_t* x = static_cast<const uint8_t*>(a);
  const uint8_t* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i])
      return ::testing::AssertionFailure() << "byte " << i << " of " << n << ": " << int(x[i])
                                           << " vs scalar " << int(y[i]);
  return ::testing::AssertionSuccess();
}

}  // namespace r1pi::test
