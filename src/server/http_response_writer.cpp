#include "server/http_response_writer.h"

#include <poll.h>
#include <strings.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>

namespace r1pi {

namespace {

const char* reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
  }
}

}  // namespace

std::string default_message(int status) {
  switch (status) {
    case 400: return "bad request";
    case 401: return "invalid API key";
    case 404: return "no such route";
    case 405: return "method not allowed";
    case 413: return "the request body is too large";
    default: return "the request failed";
  }
}

std::string response_head(const httplib::Request& req, const httplib::Response& res, bool keep, bool streamed) {
  std::string head = "HTTP/1.1 " + std::to_string(res.status) + " " + reason(res.status) + "\r\n";
  // The framing headers are this layer's to write.
  for (const auto& [name, value] : res.headers)
    if (strcasecmp(name.c_str(), "Content-Length") != 0 && strcasecmp(name.c_str(), "Connection") != 0 &&
        strcasecmp(name.c_str(), "Transfer-Encoding") != 0)
      head += name + ": " + value + "\r\n";
  if (!streamed) head += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  else if (req.version == "HTTP/1.1") head += "Transfer-Encoding: chunked\r\n";
  head += keep ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return head;
}

bool send_all(int fd, std::string_view data, int timeout_ms) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(size_t(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, timeout_ms) <= 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL))) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool write_response(int fd, const httplib::Request& req, httplib::Response& res, bool keep, int timeout_ms) {
  const bool streamed = bool(res.content_provider_);
  if (!streamed) {
    std::string bytes = response_head(req, res, keep, false);
    if (req.method != "HEAD") bytes += res.body;
    return send_all(fd, bytes, timeout_ms);
  }
  // A streamed answer (server-sent events): chunked; to an HTTP/1.0 client, raw until the close.
  const bool chunked = req.version == "HTTP/1.1";
  if (!send_all(fd, response_head(req, res, keep, true), timeout_ms)) return false;
  bool ok = true, done = false;
  httplib::DataSink sink;
  sink.write = [&](const char* data, size_t n) {
    if (!ok) return false;
    if (n == 0) return true;
    char size[24];
    const std::string framed = chunked ? std::string(size, size_t(std::snprintf(size, sizeof size, "%zx\r\n", n))) +
                                             std::string(data, n) + "\r\n"
                                       : std::string(data, n);
    ok = send_all(fd, framed, timeout_ms);
    return ok;
  };
  sink.done = [&] {
    if (done) return;
    done = true;
    if (ok && chunked) ok = send_all(fd, "0\r\n\r\n", timeout_ms);
  };
  sink.is_writable = [&] { return ok; };
  for (size_t offset = 0; ok && !done;)
    if (!res.content_provider_(offset, 0, sink)) ok = false;
  res.content_provider_success_ = ok && done;
  return ok && done;
}

}  // namespace r1pi
