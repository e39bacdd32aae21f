// r1pi-model: make a random-weight GGUF, import a llama2.c checkpoint, inflate a small model
// into a big shape, show a GGUF file, or show what a prompt becomes in its vocabulary.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "common/ascii_lower.h"
#include "common/error.h"
#include "common/standard_output.h"
#include "common/whole_file.h"
#include "model/architecture.h"
#include "tools/hub/hub_pull.h"
#include "tools/inflate.h"
#include "tools/model_maker.h"
#include "tools/model_presets.h"
#include "tools/quantize_model.h"
#include "tools/tokenize_prompt.h"
#include "tokenizer/printable_text.h"

namespace {

void add_size_option(CLI::App* cmd, const std::string& name, std::optional<uint32_t>& target,
                     const std::string& help) {
  cmd->add_option_function<uint32_t>(name, [&target](const uint32_t& v) { target = v; }, help);
}

// The shape flags that override a preset.
void add_shape_options(CLI::App* cmd, r1pi::MakeOptions& o) {
  add_size_option(cmd, "--dim", o.dim, "embedding size");
  add_size_option(cmd, "--layers", o.n_layers, "transformer blocks");
  add_size_option(cmd, "--heads", o.n_heads, "attention heads");
  add_size_option(cmd, "--kv-heads", o.n_kv_heads, "key/value heads");
  add_size_option(cmd, "--ffn", o.ffn_dim, "feed-forward size");
  add_size_option(cmd, "--vocab", o.n_vocab, "vocabulary size");
}

// make's and quantize's threads: the file's bytes are the same whatever their number.
void add_threads_option(CLI::App* cmd, int& threads) {
  cmd->add_option("-t,--threads", threads, "quantising threads (default: every core); the bytes do not change")
      ->check(CLI::NonNegativeNumber);
}

void report_written(const std::string& path) {
  std::printf("wrote %s (%llu bytes)\n", path.c_str(),
              static_cast<unsigned long long>(std::filesystem::file_size(path)));
}

int run(int argc, char** argv) {
  CLI::App app{"r1pi-model: make, import and inspect GGUF model files", "r1pi-model"};
  app.require_subcommand(1);

  r1pi::MakeOptions make;
  std::string make_out, matrix_type = "q4_0", output_type = "q6_k";
  CLI::App* make_cmd = app.add_subcommand("make", "write a random-weight model (Q4_0 matrices unless --type)");
  make_cmd->add_option("--arch", make.arch, "architecture: " + r1pi::architecture_names())->capture_default_str();
  make_cmd->add_option("--preset", make.preset, "the real model's shape (the other flags override it): " + r1pi::preset_names())
      ->capture_default_str();
  make_cmd->add_option("-o,--output", make_out, "GGUF file to write")->required();
  add_shape_options(make_cmd, make);
  add_size_option(make_cmd, "--ctx", make.n_ctx, "training context length (metadata)");
  make_cmd->add_option("--seed", make.seed, "weights are a function of the seed")->capture_default_str();
  std::vector<std::string> type_or_mix = r1pi::ggml_matrix_type_names();
  for (const std::string& m : r1pi::quant_mix_names()) type_or_mix.push_back(m);
  make_cmd->add_option("--type", matrix_type,
                       "type of the other matrices, or a mix as llama-quantize's (q4_k_m, q4_k_s, q5_k_m, q5_k_s, iq4_xs, iq4_nl, "
                       "mxfp4_moe: it decides output.weight's type too)")
      ->check(CLI::IsMember(type_or_mix, CLI::ignore_case))
      ->capture_default_str();
  make_cmd->add_option("--output-type", output_type, "output.weight type")
      ->check(CLI::IsMember(r1pi::ggml_matrix_type_names(), CLI::ignore_case))
      ->capture_default_str();
  make_cmd->add_flag("--tied", make.tied_output, "no output.weight: logits use token_embd.weight");
  make_cmd->add_option("--tokenizer", make.tokenizer_json,
                       "Hugging Face tokenizer.json: Llama 3's, Qwen2.5's or Qwen3's "
                       "(default: built-in byte vocabulary)");
  make_cmd->add_flag("--deepseek-specials", make.deepseek_specials,
                     "name the special tokens as DeepSeek-R1-Distill-Llama does (Llama 3's tokenizer.json)");
  bool no_progress = false;
  make_cmd->add_flag("--no-progress", no_progress, "no progress line on stderr");
  add_threads_option(make_cmd, make.threads);

  std::string checkpoint, import_out, tokenizer_bin;
  CLI::App* import_cmd =
      app.add_subcommand("import-llama2c", "convert a llama2.c checkpoint to an F32 GGUF");
  import_cmd->add_option("CHECKPOINT", checkpoint, "llama2.c model .bin")->required();
  import_cmd->add_option("-o,--output", import_out, "GGUF file to write")->required();
  import_cmd->add_option("--tokenizer", tokenizer_bin, "llama2.c tokenizer.bin (default: placeholders)");

  r1pi::MakeOptions inflate;
  inflate.preset = "1B";
  std::string small_model, inflate_out, inflate_type = "q4_0";
  bool inflate_no_progress = false;
  CLI::App* inflate_cmd = app.add_subcommand(
      "inflate", "embed a small trained model, exactly, in a bigger shape (zero padding)");
  inflate_cmd->add_option("SMALL", small_model, "the small model's GGUF file")->required();
  inflate_cmd->add_option("--preset", inflate.preset, "the shape: tiny, 1B or 8B (flags below override it)")
      ->capture_default_str();
  inflate_cmd->add_option("-o,--output", inflate_out, "GGUF file to write")->required();
  add_shape_options(inflate_cmd, inflate);
  inflate_cmd->add_option("--type", inflate_type,
                          "q4_0: as the presets (Q4_0 matrices, Q6_K output); f32: every weight exact")
      ->check(CLI::IsMember({"q4_0", "f32"}, CLI::ignore_case))->capture_default_str();
  inflate_cmd->add_flag("--no-progress", inflate_no_progress, "no progress line on stderr");

  std::string quantize_in, quantize_out, quantize_type;
  bool quantize_no_progress = false;
  int quantize_threads = 0;
  CLI::App* quantize_cmd = app.add_subcommand(
      "quantize", "rewrite an F32/F16 GGUF with its matrices in a weight type or llama-quantize's mix");
  quantize_cmd->add_option("IN", quantize_in, "F32, F16 or BF16 GGUF file")->required();
  quantize_cmd->add_option("OUT", quantize_out, "GGUF file to write")->required();
  quantize_cmd->add_option("TYPE", quantize_type, "q4_k_m, q5_k_m, q8_0, q4_0, q4_k, q5_k, q6_k, f16 (any case)")
      ->required();
  quantize_cmd->add_flag("--no-progress", quantize_no_progress, "no progress line on stderr");
  add_threads_option(quantize_cmd, quantize_threads);

  std::string info_path;
  bool info_all = false;
  CLI::App* info_cmd = app.add_subcommand("info", "show a GGUF file's metadata and tensors");
  info_cmd->add_option("FILE", info_path, "GGUF file")->required();
  info_cmd->add_flag("--all", info_all, "print arrays and long strings in full");

  r1pi::TokenizeOptions tokenize;
  std::string tokenize_file;
  CLI::App* tokenize_cmd =
      app.add_subcommand("tokenize", "print the tokens a prompt becomes, as llama.cpp's llama-tokenize");
  tokenize_cmd->add_option("-m,--model", tokenize.model_path, "GGUF file (its vocabulary)")->required();
  auto* prompt_option = tokenize_cmd->add_option("-p,--prompt", tokenize.prompt, "prompt text");
  tokenize_cmd->add_option("-f,--file", tokenize_file, "read the prompt from a file")->excludes(prompt_option);
  tokenize_cmd->add_flag("--ids", tokenize.ids_only, "only the ids, space-separated");
  tokenize_cmd->add_flag("--no-bos", tokenize.no_bos, "do not prepend BOS");

  r1pi::PullOptions pull;
  bool pull_no_progress = false;
  CLI::App* pull_cmd = app.add_subcommand(
      "pull", "download a GGUF from the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN), resumed and verified");
  pull_cmd->add_option("REPO", pull.spec, "OWNER/NAME[:QUANT], QUANT as in the file names (default Q4_K_M, else Q4_0)")
      ->required();
  pull_cmd->add_option("-o,--output-dir", pull.out_dir, "folder for the file(s)")->capture_default_str();
  pull_cmd->add_flag("--no-progress", pull_no_progress, "no progress line on stderr");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (*make_cmd) {
      make.progress = !no_progress;
      make.mix = r1pi::quant_mix_named(matrix_type);
      if (!make.mix) make.matrix_type = *r1pi::ggml_matrix_type_named(matrix_type);
      make.output_type = *r1pi::ggml_matrix_type_named(output_type);
      r1pi::make_model(make, make_out);
      report_written(make_out);
    } else if (*import_cmd) {
      r1pi::import_llama2c(checkpoint, import_out, tokenizer_bin);
      report_written(import_out);
    } else if (*inflate_cmd) {
      inflate.progress = !inflate_no_progress;
      if (r1pi::ascii_lower(inflate_type) == "f32")
        inflate.matrix_type = inflate.output_type = r1pi::GgmlType::F32;
      r1pi::inflate_model(small_model, inflate, inflate_out);
      report_written(inflate_out);
    } else if (*quantize_cmd) {
      r1pi::quantize_model(quantize_in, quantize_out, quantize_type, !quantize_no_progress, quantize_threads);
      report_written(quantize_out);
    } else if (*info_cmd) {
      r1pi::print_model_info(info_path, info_all);
    } else if (*pull_cmd) {
      pull.progress = !pull_no_progress;
      for (const std::string& path : r1pi::pull_model(pull)) std::printf("%s\n", path.c_str());
    } else if (*tokenize_cmd) {
      if (!*prompt_option && tokenize_file.empty())
        throw r1pi::Error("tokenize: give the text with -p TEXT or -f FILE");
      if (!tokenize_file.empty()) tokenize.prompt = r1pi::read_whole_file(tokenize_file, "prompt file");
      const std::string text = r1pi::tokenize_prompt(tokenize);
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
  } catch (const std::exception& e) {
    // r1pi::Error carries a message naming the file and the problem; anything else (out of
    // memory, a filesystem error) is reported the same way rather than as a crash.
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", r1pi::printable_text(e.what(), true).c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return r1pi::exit_status_after_stdout(run(argc, argv)); }
