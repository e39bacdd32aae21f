// SHA-256 through OpenSSL's libcrypto, fed in pieces, and a digest as hex: the generated ids' hash
// every run prints, the model fingerprint the ranks compare, a binary's hash across boards.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace r1pi {

using Sha256Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void add(const void* data, size_t bytes);
  Sha256Digest finish();

 private:
  void* ctx_;  // OpenSSL's EVP_MD_CTX, kept out of this header
};

// The first `bytes` bytes of a digest as lowercase hex (64 digits for the whole).
std::string to_hex(const Sha256Digest& digest, size_t bytes = 32);

}  // namespace r1pi
