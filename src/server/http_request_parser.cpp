#include "server/http_request_parser.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace r1pi {

namespace {

constexpr size_t kMaxChunkLine = 1024;  // a chunk's size line, extensions included

// The first line of input: its text, without LF or CRLF, and its size with them; none when no
// line ends within input.
struct Line {
  std::string_view text;
  size_t size;
};

std::optional<Line> first_line(std::string_view input) {
  const size_t lf = input.find('\n');
  if (lf == input.npos) return std::nullopt;
  std::string_view text = input.substr(0, lf);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return Line{text, lf + 1};
}

// A byte that no request line or header may hold: NUL and CR never (RFC 9110 5.5: a lone CR would
// end the line for a reader that splits on it, and "X-A: a\rInjected: 1" would be two headers
// there), nor the other controls but tab.
std::optional<unsigned char> control_in(std::string_view s) {
  for (const char ch : s) {
    const auto byte = static_cast<unsigned char>(ch);
    if ((byte < 0x20 && byte != '\t') || byte == 0x7f) return byte;
  }
  return std::nullopt;
}

Refusal control_refusal(const char* where, unsigned char byte) {
  char text[96];
  std::snprintf(text, sizeof text, "%s holds a control character (0x%02X)", where, byte);
  return Refusal{400, text};
}

// A method or header name: RFC 9110's token characters.
bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    const auto byte = static_cast<unsigned char>(ch);
    return std::isalnum(byte) || std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
  });
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const Refusal kHeadTooLarge{431, "the request line and headers are over 16 KiB"};

}  // namespace

httplib::Request RequestParser::take() {
  httplib::Request taken = std::move(req_);
  req_ = httplib::Request();
  stage_ = Stage::Head;
  length_ = 0;
  trailer_bytes_ = 0;
  return taken;
}

std::optional<Refusal> RequestParser::parse(std::string_view input, size_t& used) {
  used = 0;
  if (stage_ == Stage::Head) {
    if (auto refused = parse_head(input, used)) return refused;
    input.remove_prefix(used);
  }
  if (stage_ == Stage::Body) {
    const size_t n = std::min(length_, input.size());
    req_.body.append(input.substr(0, n));  // (reserved whole by framing)
    used += n;
    length_ -= n;
    if (length_ == 0) stage_ = Stage::Done;
    return std::nullopt;
  }
  size_t chunked = 0;
  std::optional<Refusal> refused = parse_chunks(input, chunked);
  used += chunked;
  return refused;
}

std::optional<Refusal> RequestParser::parse_head(std::string_view input, size_t& used) {
  // Blank lines before a request are allowed (RFC 9112 2.2).
  for (std::optional<Line> line = first_line(input); line && line->text.empty(); line = first_line(input)) {
    input.remove_prefix(line->size);
    used += line->size;
  }
  size_t end = 0;  // the head's size, up to and with its blank last line
  for (;;) {
    const std::optional<Line> line = first_line(input.substr(end));
    if (!line) {
      if (input.size() > kMaxRequestHead) return kHeadTooLarge;
      return std::nullopt;
    }
    end += line->size;
    if (end > kMaxRequestHead) return kHeadTooLarge;
    if (line->text.empty()) break;
  }
  if (auto refused = read_fields(input.substr(0, end))) return refused;
  used += end;
  return framing();
}

std::optional<Refusal> RequestParser::read_fields(std::string_view head) {
  std::optional<Line> line = first_line(head);
  if (const auto byte = control_in(line->text)) return control_refusal("the request line", *byte);
  const std::string_view request_line = line->text;
  const size_t sp1 = request_line.find(' '), sp2 = request_line.find(' ', sp1 == request_line.npos ? sp1 : sp1 + 1);
  if (sp1 == request_line.npos || sp2 == request_line.npos || request_line.find(' ', sp2 + 1) != request_line.npos ||
      !is_token(request_line.substr(0, sp1)))
    return Refusal{400, "the request line is not METHOD TARGET HTTP/1.1"};
  req_.method = std::string(request_line.substr(0, sp1));
  req_.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
  req_.version = std::string(request_line.substr(sp2 + 1));
  if (req_.target.empty() || req_.target[0] != '/') return Refusal{400, "the request line is not METHOD TARGET HTTP/1.1"};
  if (req_.version != "HTTP/1.1" && req_.version != "HTTP/1.0")
    return Refusal{505, "r1pi speaks HTTP/1.1 (and 1.0), not " + req_.version};
  req_.path = req_.target.substr(0, req_.target.find('?'));
  for (head.remove_prefix(line->size); (line = first_line(head)) && !line->text.empty(); head.remove_prefix(line->size)) {
    const std::string_view field = line->text;
    const size_t colon = field.find(':');
    if (colon == field.npos || !is_token(field.substr(0, colon))) return Refusal{400, "a header line is not NAME: VALUE"};
    if (const auto byte = control_in(field)) return control_refusal("a header", *byte);
    req_.headers.emplace(std::string(field.substr(0, colon)), std::string(trimmed(field.substr(colon + 1))));
  }
  return std::nullopt;
}

// How the body is framed (RFC 9112 6.3), refusing every request that two readers could frame
// differently.
std::optional<Refusal> RequestParser::framing() {
  const size_t codings = req_.get_header_value_count("Transfer-Encoding");
  // "chunked" and a second header naming another coding (or chunked again) is not a chunked body.
  if (codings > 1) return Refusal{400, "two Transfer-Encoding headers"};
  const bool chunked = codings == 1;
  if (chunked && strcasecmp(req_.get_header_value("Transfer-Encoding").c_str(), "chunked") != 0)
    return Refusal{501, "Transfer-Encoding: r1pi reads chunked, nothing else"};
  const size_t lengths = req_.get_header_value_count("Content-Length");
  if (chunked && lengths > 0) return Refusal{400, "a request with both Content-Length and Transfer-Encoding"};
  length_ = 0;
  for (size_t i = 0; i < lengths; ++i) {
    const std::string v = req_.get_header_value("Content-Length", i);
    // Digits only (no sign, no spaces inside); 18 of them at most, which no limit reaches.
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != v.npos)
      return Refusal{400, "Content-Length must be decimal digits, not '" + v + "'"};
    const size_t n = std::stoull(v);
    if (i > 0 && n != length_) return Refusal{400, "two Content-Length headers that differ"};
    length_ = n;
  }
  if (length_ > max_body_)
    return Refusal{413, "the request body is " + std::to_string(length_) + " bytes; the limit is " +
                            std::to_string(max_body_)};
  req_.body.reserve(length_);
  stage_ = chunked ? Stage::ChunkSize : length_ > 0 ? Stage::Body : Stage::Done;
  return std::nullopt;
}

// A chunked body (RFC 9112 7.1), decoded as it comes; over max_body_bytes is 413 however small
// its chunks.
std::optional<Refusal> RequestParser::parse_chunks(std::string_view input, size_t& used) {
  std::string& body = req_.body;
  auto take = [&](size_t n) {
    input.remove_prefix(n);
    used += n;
  };
  for (;;) {
    switch (stage_) {
      case Stage::ChunkSize: {
        const std::optional<Line> line = first_line(input);
        if (!line) {
          if (input.size() > kMaxChunkLine) return Refusal{400, "a chunk size line over 1 KiB"};
          return std::nullopt;
        }
        const std::string_view digits = trimmed(line->text.substr(0, line->text.find(';')));
        if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789abcdefABCDEF") != digits.npos)
          return Refusal{400, "a chunk size that is not hexadecimal"};
        length_ = std::stoull(std::string(digits), nullptr, 16);
        if (length_ > max_body_ - body.size())
          return Refusal{413, "the chunked request body is over the limit of " + std::to_string(max_body_) + " bytes"};
        // Room for this chunk, growing by doubling up to the limit (not past it, as append would).
        if (body.capacity() < body.size() + length_)
          body.reserve(std::min(max_body_, std::max(2 * body.capacity(), body.size() + length_)));
        take(line->size);
        stage_ = length_ == 0 ? Stage::Trailer : Stage::ChunkData;
        break;
      }
      case Stage::ChunkData: {
        const size_t n = std::min(length_, input.size());
        body.append(input.substr(0, n));
        take(n);
        length_ -= n;
        if (length_ > 0) return std::nullopt;
        stage_ = Stage::ChunkEnd;
        break;
      }
      case Stage::ChunkEnd: {  // CRLF, or LF alone
        const size_t ending = input.substr(0, 2) == "\r\n" ? 2 : input.substr(0, 1) == "\n" ? 1 : 0;
        if (ending == 0 && (input.empty() || input == "\r")) return std::nullopt;
        if (ending == 0) return Refusal{400, "a chunk does not end with CRLF"};
        take(ending);
        stage_ = Stage::ChunkSize;
        break;
      }
      case Stage::Trailer: {  // trailer fields are read and dropped
        const std::optional<Line> line = first_line(input);
        if (!line && trailer_bytes_ + input.size() <= kMaxRequestHead) return std::nullopt;
        if (!line || (trailer_bytes_ += line->size) > kMaxRequestHead)
          return Refusal{431, "the chunked body's trailer is over 16 KiB"};
        take(line->size);
        if (line->text.empty()) {
          stage_ = Stage::Done;
          return std::nullopt;
        }
        break;
      }
      default:
        return std::nullopt;
    }
  }
}

}  // namespace r1pi
