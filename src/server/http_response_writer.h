// An answer as HTTP/1.1 bytes on a connection's socket (which does not block): the head, then the
// body whole, or a stream from the response's content provider (chunked; to an HTTP/1.0 client,
// raw until the connection closes).
#pragma once
#include <httplib.h>

#include <string>
#include <string_view>

namespace r1pi {

// The message of an error answer whose handler gave none.
std::string default_message(int status);

// The status line and headers; keep: the connection stays open after it.
std::string response_head(const httplib::Request& req, const httplib::Response& res, bool keep, bool streamed);

// Writes all of data, waiting at most timeout_ms each time the socket is full; false when it could not.
bool send_all(int fd, std::string_view data, int timeout_ms);

// Writes the answer; false when the connection failed (the client left, or stopped reading).
bool write_response(int fd, const httplib::Request& req, httplib::Response& res, bool keep, int timeout_ms);

}  // namespace r1pi
