// A short fingerprint of a GGUF file, so that ranks can check they opened the same model: SHA-256
// over the file size, the header (metadata and tensor infos) and the first and last 4 KiB of every
// tensor. A file that was cut short, re-quantised or half downloaded differs there; a change in
// the middle of a tensor does not show (finding it would mean reading every byte of the file).
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace r1pi {

class GgufFile;

using Fingerprint = std::array<uint8_t, 32>;
Fingerprint model_fingerprint(const GgufFile& file);
std::string to_hex(const Fingerprint& f, size_t bytes = 8);

}  // namespace r1pi
