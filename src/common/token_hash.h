// The fingerprint every run prints: SHA-256 of the generated token ids, each as a little-endian
// int32, in generation order (the end-of-generation token included when one was sampled).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace r1pi {

std::string token_ids_sha256(const std::vector<int32_t>& ids);  // 64 lowercase hex digits

}  // namespace r1pi
