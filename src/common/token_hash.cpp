#include "common/token_hash.h"

#include <openssl/evp.h>

namespace r1pi {

std::string token_ids_sha256(const std::vector<int32_t>& ids) {
  std::vector<unsigned char> bytes;
  bytes.reserve(ids.size() * 4);
  for (int32_t id : ids)
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(uint8_t(uint32_t(id) >> shift));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

}  // namespace r1pi
