#include "common/token_hash.h"

#include "common/sha256.h"

namespace r1pi {

std::string token_ids_sha256(const std::vector<int32_t>& ids) {
  std::vector<unsigned char> bytes;
  bytes.reserve(ids.size() * 4);
  for (int32_t id : ids)
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(uint8_t(uint32_t(id) >> shift));
  Sha256 sha;
  sha.add(bytes.data(), bytes.size());
  return to_hex(sha.finish());
}

}  // namespace r1pi
