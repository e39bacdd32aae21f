#include "model/model_fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>

#include "gguf/gguf_file.h"

namespace r1pi {

namespace {
// Read from each end of every tensor: a few MB for the 8B, against the whole file for a full hash.
constexpr uint64_t kSampleBytes = 4096;
}  // namespace

Fingerprint model_fingerprint(const GgufFile& file) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  const uint64_t size = file.file_size();
  EVP_DigestUpdate(ctx, &size, sizeof size);
  EVP_DigestUpdate(ctx, file.header_bytes(), file.data_offset());
  for (const GgufTensorInfo& t : file.tensors()) {
    const uint64_t sample = std::min<uint64_t>(t.n_bytes, kSampleBytes);
    const uint8_t* data = file.tensor_data(t);
    EVP_DigestUpdate(ctx, data, sample);
    EVP_DigestUpdate(ctx, data + t.n_bytes - sample, sample);
  }
  Fingerprint f{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, f.data(), &len);
  EVP_MD_CTX_free(ctx);
  return f;
}

std::string to_hex(const Fingerprint& f, size_t bytes) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes && i < f.size(); ++i) {
    s += hex[f[i] >> 4];
    s += hex[f[i] & 15];
  }
  return s;
}

}  // namespace r1pi
