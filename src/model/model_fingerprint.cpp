#include "model/model_fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>

#include "gguf/gguf_file.h"

namespace r1pi {

Fingerprint model_fingerprint(const GgufFile& file) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  const uint64_t size = file.file_size();
  EVP_DigestUpdate(ctx, &size, sizeof size);
  EVP_DigestUpdate(ctx, file.header_bytes(), file.data_offset());
  for (const GgufTensorInfo& t : file.tensors())
    EVP_DigestUpdate(ctx, file.tensor_data(t), std::min<uint64_t>(t.n_bytes, 4096));
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
