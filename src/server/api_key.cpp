#include "server/api_key.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <filesystem>

#include "common/error.h"
#include "common/whole_file.h"

namespace r1pi {

namespace {

bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(given.data()), given.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), b);
  return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

}  // namespace

bool api_key_matches(const std::string& header, const std::string& key) { return same_secret(header, "Bearer " + key); }

bool api_key_accepted(const std::string& authorization_header, const std::string& x_api_key_header,
                      const std::string& key) {
  // Both compared, whatever the first gives: which header a client uses shows in no timing either.
  const bool bearer = api_key_matches(authorization_header, key);
  const bool x_api_key = same_secret(x_api_key_header, key);
  return bearer || x_api_key;
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
