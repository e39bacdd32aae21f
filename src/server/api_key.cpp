#include "server/api_key.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace r1pi {

bool api_key_matches(const std::string& header, const std::string& key) {
  const std::string expected = "Bearer " + key;
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(header.data()), header.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), b);
  return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

}  // namespace r1pi
