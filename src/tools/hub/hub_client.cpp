// cpp-httplib and TLS. Debian's libcpp-httplib-dev is cpp-httplib's split build: httplib.h
// declares, libcpp-httplib.so defines, and the .so is built with CPPHTTPLIB_OPENSSL_SUPPORT,
// CPPHTTPLIB_ZLIB_SUPPORT and CPPHTTPLIB_BROTLI_SUPPORT, which its pkg-config Cflags hand to every
// user. Those macros change the layout of httplib's classes (ClientImpl grows TLS members), so a
// translation unit that included httplib.h without them, or with a #define of its own, would
// disagree with the .so and with the server (src/server, also built with pkg-config's flags).
// Hence no #define here: this file is built in its own library, r1pi_hub, that takes the flags
// from PkgConfig::HTTPLIB like the server does, and the check below stops a build that lacks them
// (https would be impossible and the layout wrong). r1pi_core, which every program links, never
// includes httplib.h, so no binary mixes two variants; TLS costs r1pi-model only libssl, which
// libcpp-httplib.so brings along anyway. Certificates are verified against the system's CA store
// (OpenSSL's default paths: SSL_CERT_FILE and SSL_CERT_DIR apply).
#include "tools/hub/hub_client.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/ascii_lower.h"

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#error "r1pi_hub must be built with cpp-httplib's pkg-config flags (CPPHTTPLIB_OPENSSL_SUPPORT)"
#endif

namespace r1pi {
namespace {

constexpr int kMaxRedirects = 10;
constexpr size_t kErrorBodyBytes = 4096;
constexpr size_t kBodyBytes = size_t(256) << 20;  // a listing page is kilobytes; a bound, not a limit

struct Url {
  std::string origin;  // scheme://host[:port]
  std::string target;  // /path?query
};

// scheme://host[:port][/path][?query]; throws naming what for anything else.
Url split_url(const std::string& url, const std::string& what) {
  static const std::regex re(R"(^(https?)://([^/?#@\s]+)([^#\s]*)$)", std::regex::icase);
  std::smatch m;
  if (!std::regex_match(url, m, re))
    throw Error(what + ": not an http:// or https:// URL: " + url);
  std::string target = m[3].str();
  if (target.empty() || target[0] != '/') target = "/" + target;
  return {ascii_lower(m[1].str()) + "://" + m[2].str(), target};
}

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

bool is_success(int status) { return status >= 200 && status < 300; }

// A Location header against the URL that sent it: absolute, scheme-relative, host-relative or
// relative to the path's folder.
std::string resolve_location(const std::string& base, const std::string& location) {
  if (location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0) return location;
  const Url b = split_url(base, "redirect");
  if (location.rfind("//", 0) == 0) return b.origin.substr(0, b.origin.find(':')) + ":" + location;
  if (!location.empty() && location[0] == '/') return b.origin + location;
  const std::string path = b.target.substr(0, b.target.find('?'));
  return b.origin + path.substr(0, path.rfind('/') + 1) + location;
}

std::string transfer_message(httplib::Error e, const std::string& origin) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect to " + origin + " (no network, a name that does not resolve, or nothing "
             "listening there; HF_ENDPOINT chooses the Hub)";
    case httplib::Error::ConnectionTimeout: return "timed out connecting to " + origin;
    case httplib::Error::Read: return "the connection to " + origin + " broke before the reply was complete";
    case httplib::Error::Write: return "could not send the request to " + origin;
    case httplib::Error::SSLConnection: return "the TLS handshake with " + origin + " failed";
    case httplib::Error::SSLLoadingCerts: return "could not load the system's CA certificates";
    case httplib::Error::SSLServerVerification:
      return "the TLS certificate of " + origin + " could not be verified against the system's CA "
             "certificates (SSL_CERT_FILE, SSL_CERT_DIR)";
    default: return "the request to " + origin + " failed (" + httplib::to_string(e) + ")";
  }
}

}  // namespace

std::string HubResponse::header(const std::string& lowercase_name) const {
  const auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

HubClient::HubClient(const std::string& endpoint, std::string token) : token_(std::move(token)) {
  std::string e = endpoint;
  while (!e.empty() && e.back() == '/') e.pop_back();
  const Url u = split_url(e, "HF_ENDPOINT");
  if (u.target.find('?') != std::string::npos) throw Error("HF_ENDPOINT: a URL without a query: " + endpoint);
  origin_ = u.origin;
  prefix_ = u.target == "/" ? "" : u.target;
  endpoint_ = origin_ + prefix_;
}

HubClient HubClient::from_environment() {
  // As huggingface_hub: HF_ENDPOINT with trailing slashes dropped; an empty HF_TOKEN is no token
  // (an empty HF_ENDPOINT, which huggingface_hub would take literally, is the default here).
  const char* endpoint = std::getenv("HF_ENDPOINT");
  const char* token = std::getenv("HF_TOKEN");
  return HubClient(endpoint && *endpoint ? endpoint : "https://huggingface.co", token ? token : "");
}

HubResponse HubClient::get(const std::string& path_or_url, const HubHeaders& headers,
                           const HubBodySink* sink) const {
  const bool absolute = path_or_url.rfind("http://", 0) == 0 || path_or_url.rfind("https://", 0) == 0;
  std::string url = absolute ? path_or_url : endpoint_ + path_or_url;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    const Url u = split_url(url, "request");
    httplib::Client client(u.origin);
    client.set_follow_location(false);  // followed here, to drop the token on another origin
    client.set_url_encode(false);       // paths come encoded; a CDN's signed query must stay as is
    client.set_connection_timeout(30);
    client.set_read_timeout(60);
    httplib::Headers request_headers;
    for (const auto& [name, value] : headers) request_headers.emplace(name, value);
    request_headers.emplace("User-Agent", "r1pi-model");
    // As requests (huggingface_hub) does: the token goes to the Hub, never to the CDN it sends
    // downloads to (the CDN's URL is signed).
    if (!token_.empty() && u.origin == origin_) request_headers.emplace("Authorization", "Bearer " + token_);

    HubResponse reply;
    reply.url = url;
    bool redirect = false;
    std::exception_ptr failure;
    auto on_response = [&](const httplib::Response& r) {
      reply.status = r.status;
      for (const auto& [name, value] : r.headers) reply.headers.emplace(ascii_lower(name), value);
      redirect = is_redirect(r.status) && r.has_header("Location");
      if (redirect || !is_success(r.status) || !sink || !sink->head) return true;
      try {
        sink->head(reply);
        return true;
      } catch (...) {
        failure = std::current_exception();
        return false;
      }
    };
    auto on_body = [&](const char* data, size_t n) {
      if (redirect) return true;
      if (is_success(reply.status) && sink) {
        try {
          sink->body(data, n);
          return true;
        } catch (...) {
          failure = std::current_exception();
          return false;
        }
      }
      if (!is_success(reply.status)) {
        reply.body.append(data, std::min(n, kErrorBodyBytes - std::min(kErrorBodyBytes, reply.body.size())));
        return true;
      }
      if (reply.body.size() + n > kBodyBytes) {
        failure = std::make_exception_ptr(Error("the reply from " + u.origin + " is larger than " +
                                                std::to_string(kBodyBytes >> 20) + " MB"));
        return false;
      }
      reply.body.append(data, n);
      return true;
    };
    const httplib::Result result = client.Get(u.target, request_headers, on_response, on_body);
    if (failure) std::rethrow_exception(failure);
    if (result.error() != httplib::Error::Success) throw HubTransferError(transfer_message(result.error(), u.origin));
    if (!redirect) return reply;
    url = resolve_location(url, reply.header("location"));
  }
  throw Error("more than " + std::to_string(kMaxRedirects) + " redirects from " + path_or_url);
}

Error HubClient::status_error(const HubResponse& reply, const std::string& what) const {
  std::string message = what + ": ";
  switch (reply.status) {
    case 401:
      message += has_token()
                     ? "401 Unauthorized: the Hub refused HF_TOKEN, or the repository does not exist or "
                       "is not readable with it"
                     : "401 Unauthorized: the repository does not exist, or it is private or gated: set "
                       "HF_TOKEN to an access token of an account that may read it";
      break;
    case 403:
      message += has_token()
                     ? "403 Forbidden: HF_TOKEN's account may not read it (a gated model: accept its "
                       "conditions on its page first)"
                     : "403 Forbidden: set HF_TOKEN to an access token of an account that may read it";
      break;
    case 404: message += "not found at " + endpoint_ + " (404)"; break;
    default: message += "HTTP " + std::to_string(reply.status); break;
  }
  // The Hub explains itself in X-Error-Message, or in {"error": "..."}.
  std::string detail = reply.header("x-error-message");
  if (detail.empty()) {
    const nlohmann::json body = nlohmann::json::parse(reply.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) detail = body["error"];
  }
  if (!detail.empty()) message += " (the Hub says: " + detail + ")";
  return Error(message);
}

std::string hub_url_path(const std::string& file_path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : file_path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace r1pi
