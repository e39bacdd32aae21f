#include "test_support.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "layers/llama_forward.h"
#include "layers/shard_sync.h"
#include "model/model_loader.h"
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

std::string make_model_file(const std::string& name, MakeOptions options) {
  const std::string path = scratch_dir(name + "-" + std::to_string(getpid())) + "/model.gguf";
  options.progress = false;
  make_model(options, path);
  return path;
}

std::vector<float> chunked_logits(const LoadedModel& m, const std::vector<int32_t>& tokens,
                                  int chunk, ThreadPool& pool) {
  NoSync sync;
  const int T = int(tokens.size());
  LlamaForward f(m.config, m.weights, m.shard, T, pool, sync);
  std::vector<float> out;
  for (int pos = 0; pos < T; pos += chunk) {
    const int n = std::min(chunk, T - pos);
    const std::vector<float>& lg = f.forward(tokens.data() + pos, n, pos,
                                             n == 1 ? LogitsFor::Last : LogitsFor::All);
    out.insert(out.end(), lg.begin(), lg.end());
  }
  return out;
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

}  // namespace r1pi::test
