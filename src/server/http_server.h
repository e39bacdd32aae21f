// The HTTP/1.1 connection layer of `r1pi --serve`, in place of cpp-httplib's (0.11.4, Debian's):
// the routes still take httplib::Request and httplib::Response, but connections are accepted,
// read and framed here. cpp-httplib gives each connection a pool thread from accept to close
// (keep-alive waits included), so ~200 idle connections left nothing for /health; it reads
// chunked bodies whole whatever its payload limit; it drops the second of two pipelined
// requests (each request gets a fresh read buffer); it listens with a backlog of 5; and it takes
// "Content-Length: +65". None of these can be changed from outside it.
//
// Here one event thread (epoll) holds every connection that is idle or still sending its request,
// at the cost of a descriptor and a buffer each, reads requests without blocking
// (http_request_parser.h), counts what they hold against one budget (request_memory.h), and hands a
// complete one (head and body, within the limits) to the worker pool, which runs its handler and
// writes the answer (http_response_writer.h); the connection then comes back to the event thread, where bytes that were
// pipelined behind the request are the next one, answered in order.
#pragma once
#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace r1pi {

struct HttpLimits {
  size_t max_body_bytes = 1 << 20;  // a larger body (by Content-Length or chunked) gets 413
  int read_timeout_seconds = 30;    // from a request's first byte to its last: then 408
  int write_timeout_seconds = 30;   // for each write of an answer
  int keep_alive_seconds = 5;       // a connection idle this long (before or between requests) is closed
  size_t workers = 40;              // threads running handlers (a waiting completion holds one)
  // Open connections at most (0: from the descriptor limit), and from one client address; one
  // more gets 503 with Retry-After and is closed. Past half of max_connections, idle connections
  // are closed after 1 s instead of keep_alive_seconds. Per address, a few dozen: each may hold
  // a body of max_body_bytes, and a browser opens 6 (a proxy in front makes every client one
  // address: raise it there).
  size_t max_connections = 0;
  size_t max_connections_per_address = 32;
  // The bytes that requests being received or answered hold, all connections together (their
  // input and bodies, a declared Content-Length from the head on); a request that would pass it
  // gets 503 with Retry-After. 64 MiB: twice the default queue of 1 MiB bodies.
  size_t max_buffered_bytes = 64 << 20;
};

class HttpServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  // Runs before the route's handler; true when it answered the request itself.
  using PreRouting = std::function<bool(const httplib::Request&, httplib::Response&)>;

  explicit HttpServer(HttpLimits limits);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void get(const std::string& path, Handler handler);
  void post(const std::string& path, Handler handler);
  void set_pre_routing(PreRouting handler);
  // Gives a body to an answer of status >= 400 that has none (the layer's own too: 400, 404, 405,
  // 408, 413, 431, 501, 503, 505); message says what was wrong.
  using ErrorBody = std::function<void(httplib::Response&, const std::string& message)>;
  void set_error_body(ErrorBody handler);
  // Called once per answered request, after its last byte (a stream's too) or its refusal, on the
  // worker thread that answered it (a connection refused at accept: the event thread, request
  // empty). elapsed: from the request's last byte to the answer's last (0 for a refusal at accept).
  using Logger =
      std::function<void(const httplib::Request&, const httplib::Response&, std::chrono::milliseconds elapsed)>;
  void set_logger(Logger logger);
  // The worker pool (created when run starts; default: plain threads).
  void set_worker_pool(std::function<std::unique_ptr<httplib::TaskQueue>(size_t threads)> make);

  // Listens on host:port (0: a free port); returns the port, or -1 when it cannot.
  int bind(const std::string& host, int port);
  // Serves until stop(); then lets the requests being answered finish and closes every connection.
  void run();
  void stop();  // any thread

  // The socket of the request that the calling worker thread is answering (-1 on any other
  // thread): a handler can watch it for a client that leaves (client_connection.h).
  static int current_socket();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace r1pi
