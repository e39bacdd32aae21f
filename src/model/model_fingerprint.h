// A short fingerprint of a GGUF file, so that ranks can check they opened the same model: SHA-256
// over the file size, the header (metadata and tensor infos) and the first 4 KiB of every tensor.
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
