// A fingerprint of a GGUF file, so that ranks can check they opened the same model: SHA-256 over
// the file size, the header (metadata and tensor infos) and, by default, samples of every tensor:
// its first and last 4 KiB and windows at offsets that a fixed seed draws, the same on every rank
// (a tensor no bigger than the windows is read whole). A file that was cut short, re-quantised, or
// half downloaded or damaged over a stretch (zeros, another file's bytes) differs there, for a few
// MB read on the 8B. A change of a few bytes between the windows shows only in the full hash of
// every byte (--verify-weights full: the whole file read, seconds to minutes from an SD card).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "common/sha256.h"

namespace r1pi {

class GgufFile;

enum class WeightCheck { Sampled, Full };
// --verify-weights's names: "sampled", "full" (Error for another).
WeightCheck weight_check(const std::string& name);
const char* weight_check_name(WeightCheck check);
// The names, for --help and errors: "sampled, full".
const char* weight_check_names();

using Fingerprint = Sha256Digest;
Fingerprint model_fingerprint(const GgufFile& file, WeightCheck check = WeightCheck::Sampled);

}  // namespace r1pi
