// r1pi-model pull REPO[:QUANT]: a GGUF model from the Hugging Face Hub (or HF_ENDPOINT's mirror)
// into a folder: the repository's listing, the .gguf naming the quantisation (hub_choice.h), each
// of its files downloaded, resumed and verified (hub_download.h).
#pragma once
#include <string>
#include <vector>

namespace r1pi {

struct PullOptions {
  std::string spec;           // OWNER/NAME[:QUANT]
  std::string out_dir = ".";  // created when missing
  bool progress = true;       // the progress line on a terminal
};

// The paths of the files written (a split GGUF: every part, the first first). Throws r1pi::Error.
std::vector<std::string> pull_model(const PullOptions& options);

}  // namespace r1pi
