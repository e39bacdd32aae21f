// An HTTP/1.1 request read as its bytes arrive (RFC 9112), for the connection layer
// (http_server.h): the request line, the headers and the body, sent with Content-Length or
// chunked, within the limits. Strict where leniency lets one request be read two ways (a control
// character in a header, two Transfer-Encoding headers, a chunk line that is not hexadecimal);
// lenient where nothing is ambiguous (a line may end with LF alone, as RFC 9112 2.2 allows, so
// that a request typed into nc is answered rather than left to time out).
#pragma once
#include <httplib.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace r1pi {

// A request that cannot be read on: the status and message of the answer, after which the
// connection closes. retry: the refusal is for now (the server is full), said with Retry-After.
struct Refusal {
  int status;
  std::string message;
  bool retry = false;
};

constexpr size_t kMaxRequestHead = 16 << 10;  // request line and headers (and a chunked body's trailers)

class RequestParser {
 public:
  explicit RequestParser(size_t max_body_bytes) : max_body_(max_body_bytes) {}

  // Reads what it can of input, the bytes that follow those it used before; used: how many of
  // them it took (the rest is the next request's, or incomplete). A body's bytes are copied into
  // the request as they come. A refusal ends the request.
  std::optional<Refusal> parse(std::string_view input, size_t& used);
  bool done() const { return stage_ == Stage::Done; }
  bool past_head() const { return stage_ != Stage::Head; }
  // The request so far (its head once past_head()).
  const httplib::Request& request() const { return req_; }
  // The memory its body holds: the whole declared Content-Length from the head on (reserved
  // then, so that a request that cannot fit is refused before its body is sent).
  size_t body_bytes() const { return req_.body.capacity(); }
  // The request (done() or refused), leaving the parser ready for the next one.
  httplib::Request take();

 private:
  enum class Stage { Head, Body, ChunkSize, ChunkData, ChunkEnd, Trailer, Done };
  std::optional<Refusal> parse_head(std::string_view input, size_t& used);
  std::optional<Refusal> read_fields(std::string_view head);
  std::optional<Refusal> framing();
  std::optional<Refusal> parse_chunks(std::string_view input, size_t& used);

  size_t max_body_;
  Stage stage_ = Stage::Head;
  httplib::Request req_;
  size_t length_ = 0;         // what is left of the Content-Length body, or of the current chunk
  size_t trailer_bytes_ = 0;  // a chunked body's trailer fields so far (read and dropped)
};

}  // namespace r1pi
