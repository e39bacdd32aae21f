// Which GGUF file(s) of a Hugging Face repository r1pi-model pull fetches: the repository's
// listing (GET /api/models/REPO/tree/main, a JSON array per page) read into files with their
// sizes and hashes, and the choice of the .gguf whose name carries the asked quantisation (the
// parts of a split GGUF together).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace r1pi {

struct HubFile {
  std::string path;     // in the repository, e.g. "Q4_K_M/model-Q4_K_M-00001-of-00002.gguf"
  uint64_t size = 0;
  std::string sha256;   // LFS files: lfs.oid, 64 hex digits
  std::string git_oid;  // files kept in git itself: the blob's SHA-1 (oid), 40 hex digits
};

// The files of one listing page (directories left out). Throws r1pi::Error naming where for a
// reply that is not such a listing.
std::vector<HubFile> parse_hub_listing(const std::string& json_text, const std::string& where);

// Whether a GGUF file name carries quant: the name without its directory, ".gguf" and a split
// suffix "-00001-of-00003" is cut into tokens at '-' and '.', and quant (cut the same way) must
// equal a run of whole tokens, case-insensitively; its first token may also end a token after
// '_' ("model_Q8_0"). So "Q4_K" does not name "x-Q4_K_M.gguf", nor "Q4_0" "x-Q4_0_4_4.gguf",
// nor "Q4_XS" "x-IQ4_XS.gguf"; "Q4_K_XL" names "x-UD-Q4_K_XL.gguf", as does "UD-Q4_K_XL".
bool gguf_names_quant(const std::string& file_name, const std::string& quant);

// The quantisations the .gguf file names carry (tokens as F16, Q8_0, Q4_K_M, IQ4_XS), upper
// case, in the order of the listing, each once.
std::vector<std::string> gguf_quants(const std::vector<HubFile>& files);

struct GgufChoice {
  std::string quant;           // the quantisation that matched
  std::vector<HubFile> parts;  // one file, or the parts of a split GGUF in order
};

// The .gguf of files (mmproj-* projector files left out) that names quant, or without one Q4_K_M,
// else Q4_0. Throws r1pi::Error naming repo: no .gguf at all, none matches (the quantisations
// available listed), several different files match, a split GGUF missing a part.
GgufChoice choose_gguf(const std::vector<HubFile>& files, const std::string& repo, const std::string& quant);

}  // namespace r1pi
