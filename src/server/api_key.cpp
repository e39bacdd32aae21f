#include "server/api_key.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <filesystem>

#include "common/error.h"
#include "common/whole_file.h"

namespace r1pi {

bool api_key_matches(const std::string& header, const std::string& key) {
  const std::string expected = "Bearer " + key;
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(header.data()), header.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), b);
  return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

std::string read_api_key_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw Error(path + ": the API key file is a directory");
  const std::string text = read_whole_file(path, "API key file");
  constexpr const char* kBlank = " \t\r\n\v\f";
  const size_t first = text.find_first_not_of(kBlank);
  if (first == std::string::npos) throw Error(path + ": the API key file is empty");
  const std::string key = text.substr(first, text.find_last_not_of(kBlank) - first + 1);
  for (unsigned char c : key)
    if (c < 0x20 || c == 0x7f)
      throw Error(path + ": the API key file holds more than one line or a control character: give the key alone");
  return key;
}

}  // namespace r1pi
