#include "tools/hub/hub_download.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <regex>
#include <vector>

#include "common/atomic_file.h"
#include "tools/progress.h"

namespace r1pi {
namespace fs = std::filesystem;
namespace {

// A transfer that breaks after making progress is continued at once, this many times in all;
// one that makes none ends the run (the part file stays for the next).
constexpr int kAttempts = 8;

void note(const std::string& text) { std::fprintf(stderr, "pull: %s\n", text.c_str()); }

std::string megabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  return text;
}

// The hash the listing gives: SHA-256 of the bytes for an LFS file, git's blob SHA-1 ("blob
// SIZE\0" then the bytes) for a file kept in git; neither: the size is all there is to check.
class FileDigest {
 public:
  explicit FileDigest(const HubFile& file)
      : file_(file), expected_(file.sha256.empty() ? file.git_oid : file.sha256) {
    reset();
  }
  ~FileDigest() { EVP_MD_CTX_free(ctx_); }
  FileDigest(const FileDigest&) = delete;
  FileDigest& operator=(const FileDigest&) = delete;

  void reset() {
    EVP_DigestInit_ex(ctx_, file_.sha256.empty() ? EVP_sha1() : EVP_sha256(), nullptr);
    if (file_.sha256.empty()) {
      const std::string header = "blob " + std::to_string(file_.size) + '\0';
      update(header.data(), header.size());
    }
  }
  void update(const void* data, size_t n) { EVP_DigestUpdate(ctx_, data, n); }
  const char* name() const { return file_.sha256.empty() ? "git SHA-1" : "SHA-256"; }
  const std::string& expected() const { return expected_; }

  // Finishes the hash: its lowercase hex digits.
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_, digest, &len);
    std::string out;
    char byte[3];
    for (unsigned int i = 0; i < len; ++i) out.append(byte, std::snprintf(byte, sizeof byte, "%02x", digest[i]));
    return out;
  }

 private:
  const HubFile& file_;
  std::string expected_;
  EVP_MD_CTX* ctx_ = EVP_MD_CTX_new();
};

bool same_hex(std::string a, const std::string& b) {
  for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return a == b;
}

void hash_file(const fs::path& path, FileDigest& digest) {
  std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!in) throw Error("reading " + path.string() + ": " + std::strerror(errno));
  std::vector<char> buffer(size_t(1) << 20);
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), in.get())) > 0) digest.update(buffer.data(), n);
  if (std::ferror(in.get())) throw Error("reading " + path.string() + ": " + std::strerror(errno));
}

// Content-Range: bytes FIRST-LAST/TOTAL; FIRST, or -1 when absent or unreadable.
long long range_start(const std::string& content_range) {
  static const std::regex re(R"(^\s*bytes\s+(\d+)-\d+/(\d+|\*)\s*$)", std::regex::icase);
  std::smatch m;
  return std::regex_match(content_range, m, re) ? std::stoll(m[1].str()) : -1;
}

}  // namespace

void download_hub_file(const HubClient& hub, const std::string& url_path, const HubFile& file,
                       const fs::path& dest, bool progress) {
  const std::string name = dest.filename().string();
  const std::string what = hub.endpoint() + url_path;
  FileDigest digest(file);
  if (fs::exists(dest)) {
    if (fs::file_size(dest) == file.size) {
      hash_file(dest, digest);
      if (digest.expected().empty() || same_hex(digest.hex(), digest.expected())) {
        note(dest.string() + " is there already, with the listing's size" +
             (digest.expected().empty() ? "" : std::string(" and ") + digest.name()));
        return;
      }
    }
    throw Error(dest.string() + " exists and is not " + file.path + " of the repository (its size or " +
                "hash differ): move it away, or pull into another folder with -o");
  }

  const fs::path part = dest.string() + ".part";
  uint64_t have = 0;
  if (fs::exists(part)) {
    have = fs::file_size(part);
    if (have > file.size) {
      fs::remove(part);
      have = 0;
    } else if (have > 0) {
      hash_file(part, digest);  // the hash goes on from the bytes already there
      note("resuming " + name + " at " + megabytes(have) + " of " + megabytes(file.size));
    }
  }
  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(part.c_str(), have ? "ab" : "wb"), std::fclose);
  if (!out) throw Error("writing " + part.string() + ": " + std::strerror(errno));
  auto start_over = [&] {
    out.reset(std::fopen(part.c_str(), "wb"));
    if (!out) throw Error("writing " + part.string() + ": " + std::strerror(errno));
    digest.reset();
    have = 0;
  };

  for (int attempt = 1; have < file.size; ++attempt) {
    if (attempt > kAttempts)
      throw Error(name + ": the transfer broke " + std::to_string(kAttempts) + " times; " + part.string() +
                  " keeps " + megabytes(have) + ": run the command again to resume");
    const uint64_t before = have;
    std::optional<Progress> bar;
    HubHeaders headers = {{"Accept-Encoding", "identity"}};  // byte offsets must be the file's
    if (have > 0) headers.emplace_back("Range", "bytes=" + std::to_string(have) + "-");
    HubBodySink sink;
    sink.head = [&](const HubResponse& reply) {
      if (reply.status == 206) {
        if (range_start(reply.header("content-range")) != static_cast<long long>(have))
          throw Error(what + ": the server resumed at another offset than " + std::to_string(have) +
                      " (Content-Range: " + reply.header("content-range") + ")");
      } else {
        // 200 to a range request: the whole file again, from its first byte.
        if (have > 0) note(name + ": the server does not resume (it sent the whole file): starting over");
        start_over();
      }
      bar.emplace("pulling " + name, file.size, progress, have);
    };
    sink.body = [&](const char* data, size_t n) {
      if (have + n > file.size)
        throw Error(what + ": the server sent more than the listing's " + std::to_string(file.size) + " bytes");
      if (std::fwrite(data, 1, n, out.get()) != n) throw Error("writing " + part.string() + ": " + std::strerror(errno));
      digest.update(data, n);
      have += n;
      bar->add(n);
    };
    try {
      const HubResponse reply = hub.get(url_path, headers, &sink);
      if (bar) bar->finish();
      if (reply.status == 416) {
        // The part is no prefix of this file (the file changed on the Hub since): from the start.
        note(name + ": the server refused to resume at " + megabytes(have) + ": starting over");
        start_over();
        continue;
      }
      if (reply.status < 200 || reply.status >= 300) throw hub.status_error(reply, what);
    } catch (const HubTransferError& e) {
      if (bar) bar->finish();
      std::fflush(out.get());
      if (have == before)
        throw Error(std::string(e.what()) +
                    (have ? "; " + part.string() + " keeps " + megabytes(have) + ": run the command again to resume"
                          : ""));
      note(name + ": " + e.what() + " at " + megabytes(have) + ": resuming");
      continue;
    }
    if (have < file.size) {  // a reply without a length that stopped short
      if (have == before)
        throw Error(what + ": the reply ended at " + megabytes(have) + " of " + megabytes(file.size));
      note(name + ": the reply ended at " + megabytes(have) + " of " + megabytes(file.size) + ": resuming");
    }
  }

  if (digest.expected().empty()) {
    note(name + ": the listing gives no hash: only its size is checked");
  } else {
    const std::string got = digest.hex();
    if (!same_hex(got, digest.expected())) {
      out.reset();
      fs::remove(part);
      throw Error(name + ": " + digest.name() + " mismatch: the download hashes to " + got + ", the Hub lists " +
                  digest.expected() + "; " + part.string() + " is removed: run the command again to download afresh");
    }
  }
  sync_and_rename(out.release(), part.string(), dest.string());  // on disk before it has the name
}

}  // namespace r1pi
