// The Hugging Face Hub over HTTP(S) for r1pi-model pull: the endpoint and the token taken from the
// environment as huggingface_hub takes them (HF_ENDPOINT, default https://huggingface.co, trailing
// slashes dropped; HF_TOKEN sent as "Authorization: Bearer ..."), GET requests that follow
// redirects (the Hub answers a file's download with 302 to its CDN), and replies turned into
// r1pi::Error messages a user can act on. The only file of r1pi that talks to cpp-httplib's client.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace r1pi {

// A failure to reach the server or a connection that broke mid-reply (no HTTP status to show):
// a download keeps its part file and may go on where it stopped.
struct HubTransferError : Error {
  using Error::Error;
};

struct HubResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;  // a reply without a body sink; of an error reply, its first 4 KB
  std::string url;   // where the reply came from, after redirects

  std::string header(const std::string& lowercase_name) const;
};

// What a download does with a 2xx reply: head once before the body, then body for each piece.
// Either may throw (r1pi::Error): the transfer stops and the exception reaches get's caller.
struct HubBodySink {
  std::function<void(const HubResponse&)> head;
  std::function<void(const char*, size_t)> body;
};

using HubHeaders = std::vector<std::pair<std::string, std::string>>;

class HubClient {
 public:
  // endpoint: scheme://host[:port][/prefix]; http or https. token: empty for none.
  HubClient(const std::string& endpoint, std::string token);
  static HubClient from_environment();

  const std::string& endpoint() const { return endpoint_; }
  bool has_token() const { return !token_.empty(); }

  // GET path (below the endpoint, percent-encoded already) or an absolute http(s) URL, following
  // up to 10 redirects. Returns the final reply, whatever its status; a 2xx body goes to sink
  // when given (else into HubResponse::body). Throws HubTransferError when no reply came whole.
  HubResponse get(const std::string& path_or_url, const HubHeaders& headers = {},
                  const HubBodySink* sink = nullptr) const;

  // The Error for a reply that is not 2xx: what ("repository x/y", "file F of x/y") and what to
  // do: 401/403 name HF_TOKEN, 404 says "not found", others show the status and the Hub's message.
  Error status_error(const HubResponse& reply, const std::string& what) const;

 private:
  std::string endpoint_;  // scheme://host[:port][/prefix], no trailing slash
  std::string origin_;    // scheme://host[:port]: the Hub, the only origin that is sent the token
  std::string prefix_;    // /prefix or empty
  std::string token_;
};

// Percent-encodes a repository file path for a URL, keeping its slashes (as huggingface_hub's quote).
std::string hub_url_path(const std::string& file_path);

}  // namespace r1pi
