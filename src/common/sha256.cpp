#include "common/sha256.h"

#include <openssl/evp.h>

namespace r1pi {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr); }

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::add(const void* data, size_t bytes) { EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, bytes); }

Sha256Digest Sha256::finish() {
  Sha256Digest d{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d.data(), &length);
  return d;
}

std::string to_hex(const Sha256Digest& digest, size_t bytes) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes && i < digest.size(); ++i) {
    s += hex[digest[i] >> 4];
    s += hex[digest[i] & 15];
  }
  return s;
}

}  // namespace r1pi
