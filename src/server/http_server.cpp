#include "server/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "server/client_connection.h"

namespace r1pi {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr size_t kMaxHead = 16 << 10;        // request line and headers (and a chunked body's trailers)
constexpr size_t kReadBytes = 64 << 10;      // read at a time from one connection
constexpr auto kCrowdedIdle = seconds(1);    // the idle timeout past half of max_connections
constexpr auto kLinger = seconds(1);         // reading (and dropping) what a refused client still sends
constexpr auto kSweep = milliseconds(100);   // how often timeouts are looked at

thread_local int t_current_socket = -1;  // HttpServer::current_socket

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

// The message of an error answer whose handler gave none.
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

std::string lower(std::string s) {
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// Writes all of data within timeout per wait (the socket does not block); false when it could not.
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

// A request that cannot be read on: the status and message of the answer, after which the
// connection closes.
struct Refusal {
  int status;
  std::string message;
};

// One request as it arrives, parsed as far as its bytes go.
struct Incoming {
  enum class Stage { Head, Body, ChunkSize, ChunkData, ChunkEnd, Trailer, Done };
  Stage stage = Stage::Head;
  Clock::time_point deadline;  // set at the first byte
  bool started = false;
  httplib::Request req;
  size_t length = 0;      // Content-Length, or what is left of the current chunk
  bool continue_sent = false;
};

}  // namespace

struct Connection {
  int fd = -1;
  std::string peer, local;
  int peer_port = -1, local_port = -1;
  std::string in;  // read and not yet parsed from `at` on
  size_t at = 0;
  Incoming next;
  Clock::time_point idle_since, linger_until;
  bool busy = false;       // a worker answers its request (the event thread leaves it alone)
  bool eof = false;        // the client sent all it will send
  bool lingering = false;  // refused: its input is dropped until it closes or kLinger ends
  // Set by the worker before it gives the connection back.
  bool close_after = false, linger_after = false;
};

struct HttpServer::Impl {
  HttpLimits limits;
  std::map<std::string, Handler> gets, posts;
  PreRouting pre_routing;
  ErrorBody error_body;
  Logger logger;
  std::function<std::unique_ptr<httplib::TaskQueue>(size_t)> make_pool;
  std::unique_ptr<httplib::TaskQueue> pool;

  int listen_fd = -1, epoll_fd = -1, wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::unordered_map<int, std::unique_ptr<Connection>> connections;  // the event thread's
  std::unordered_map<std::string, size_t> per_address;
  Clock::time_point accept_paused_until{};

  std::mutex returned_mutex;
  std::vector<Connection*> returned;  // given back by the workers

  // ---- the event thread ----
  void loop();
  void accept_all();
  void on_event(Connection& c);
  void advance(Connection& c);
  std::optional<Refusal> parse(Connection& c);
  std::optional<Refusal> parse_head(Connection& c, std::string_view head);
  std::optional<Refusal> parse_chunks(Connection& c);
  void dispatch(Connection& c, std::optional<Refusal> refusal);
  void resume(Connection& c);
  void sweep();
  void watch(Connection& c, bool on);
  void close_connection(Connection& c);
  void refuse_at_accept(int fd, Connection& c);

  // ---- the workers ----
  void answer(Connection& c, httplib::Request req, std::optional<Refusal> refusal, Clock::time_point arrived);
  void route(const httplib::Request& req, httplib::Response& res, std::string& message);
  bool write_response(int fd, const httplib::Request& req, httplib::Response& res, bool keep);
  void give_back(Connection& c);

  std::string serialized_head(const httplib::Request& req, const httplib::Response& res, bool keep, bool streamed);
  void fill_error(httplib::Response& res, const std::string& message) const {
    if (res.status >= 400 && res.body.empty() && !res.content_provider_ && error_body)
      error_body(res, message.empty() ? default_message(res.status) : message);
  }
  int write_ms() const { return limits.write_timeout_seconds * 1000; }
};

HttpServer::HttpServer(HttpLimits limits) : impl_(std::make_unique<Impl>()) {
  impl_->limits = limits;
  // Both exist before run's thread starts, so that stop() may come at any time.
  impl_->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl_->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->epoll_fd < 0 || impl_->wake_fd < 0) throw std::system_error(errno, std::generic_category(), "epoll");
}

HttpServer::~HttpServer() {
  for (int fd : {impl_->listen_fd, impl_->epoll_fd, impl_->wake_fd})
    if (fd >= 0) close(fd);
  for (auto& [fd, c] : impl_->connections) close(fd);
}

void HttpServer::get(const std::string& path, Handler handler) { impl_->gets[path] = std::move(handler); }
void HttpServer::post(const std::string& path, Handler handler) { impl_->posts[path] = std::move(handler); }
void HttpServer::set_pre_routing(PreRouting handler) { impl_->pre_routing = std::move(handler); }
void HttpServer::set_error_body(ErrorBody handler) { impl_->error_body = std::move(handler); }
void HttpServer::set_logger(Logger logger) {
  impl_->logger = std::move(logger);
}
void HttpServer::set_worker_pool(std::function<std::unique_ptr<httplib::TaskQueue>(size_t)> make) {
  impl_->make_pool = std::move(make);
}

int HttpServer::bind(const std::string& host, int port) {
  // Every held connection is a descriptor: the soft limit goes up to the hard one (often 1024
  // soft, far more hard), and the connection caps follow from it.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
    getrlimit(RLIMIT_NOFILE, &files);
  }
  HttpLimits& l = impl_->limits;
  if (l.max_connections == 0) {
    const rlim_t usable = files.rlim_cur > 256 ? files.rlim_cur - 128 : 128;
    l.max_connections = size_t(std::min<rlim_t>(usable, 16384));
  }
  if (l.max_connections_per_address == 0) l.max_connections_per_address = std::max<size_t>(1, l.max_connections / 2);

  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // The kernel's whole accept backlog (net.core.somaxconn): a burst waits there for the event
    // thread instead of being reset (cpp-httplib listened with 5).
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return -1;
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  std::string ignored;
  int actual = -1;
  numeric_address(bound, len, ignored, actual);
  impl_->listen_fd = fd;
  return actual;
}

int HttpServer::current_socket() { return t_current_socket; }

void HttpServer::stop() {
  impl_->stopping = true;
  const uint64_t one = 1;
  (void)!write(impl_->wake_fd, &one, sizeof one);
}

void HttpServer::run() {
  Impl& s = *impl_;
  s.pool = s.make_pool ? s.make_pool(s.limits.workers) : std::make_unique<httplib::ThreadPool>(s.limits.workers);
  s.loop();
  // Requests being answered finish (their workers give their connections back), then every
  // connection closes.
  s.pool->shutdown();
  for (auto& [fd, c] : s.connections) close(fd);
  s.connections.clear();
  close(s.listen_fd);
  s.listen_fd = -1;
}

// ---------------------------------------------------------------- the event thread

void HttpServer::Impl::watch(Connection& c, bool on) {
  epoll_event e{};
  e.events = EPOLLIN | EPOLLRDHUP;
  e.data.fd = c.fd;
  // A connection that a worker answers is out of the set: a hang-up is reported even with no
  // events asked, and would wake this thread again and again.
  epoll_ctl(epoll_fd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, c.fd, on ? &e : nullptr);
}

void HttpServer::Impl::loop() {
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = listen_fd;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &e);
  e.data.fd = wake_fd;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &e);
  bool accepting = true;
  Clock::time_point next_sweep = Clock::now() + kSweep;
  std::vector<epoll_event> events(256);
  while (!stopping) {
    const int n = epoll_wait(epoll_fd, events.data(), int(events.size()), int(kSweep.count()));
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd) {
        accept_all();
        if (accept_paused_until > Clock::now()) {
          epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
          accepting = false;
        }
      } else if (fd == wake_fd) {
        uint64_t count;
        (void)!read(wake_fd, &count, sizeof count);
        std::vector<Connection*> back;
        {
          std::lock_guard lock(returned_mutex);
          back.swap(returned);
        }
        for (Connection* c : back) resume(*c);
      } else if (auto it = connections.find(fd); it != connections.end() && !it->second->busy) {
        on_event(*it->second);
      }
    }
    const Clock::time_point now = Clock::now();
    if (!accepting && now >= accept_paused_until) {
      e.data.fd = listen_fd;
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &e);
      accepting = true;
    }
    if (now >= next_sweep) {
      sweep();
      next_sweep = now + kSweep;
    }
  }
}

void HttpServer::Impl::accept_all() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      // Out of descriptors or memory: the backlog holds the rest until some connection closes.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        accept_paused_until = Clock::now() + kSweep;
      return;
    }
    const int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    numeric_address(peer, len, c->peer, c->peer_port);
    sockaddr_storage local{};
    socklen_t local_len = sizeof local;
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len);
    numeric_address(local, local_len, c->local, c->local_port);
    c->idle_since = Clock::now();
    Connection& conn = *c;
    const bool over = connections.size() >= limits.max_connections ||
                      per_address[conn.peer] >= limits.max_connections_per_address;
    connections.emplace(fd, std::move(c));
    ++per_address[conn.peer];
    watch(conn, true);
    if (over) refuse_at_accept(fd, conn);
  }
}

// One connection too many: 503 with Retry-After, written at once (a few hundred bytes fit any
// socket's buffer), then its input is dropped until it closes (closing with unread input would
// reset the connection, and the client might not read the answer).
void HttpServer::Impl::refuse_at_accept(int fd, Connection& c) {
  httplib::Request req;
  req.version = "HTTP/1.1";
  httplib::Response res;
  res.status = 503;
  res.set_header("Retry-After", "1");
  fill_error(res, "the server holds too many connections" +
                      std::string(per_address[c.peer] > limits.max_connections_per_address ? " from this address" : ""));
  const std::string bytes = serialized_head(req, res, false, false) + res.body;
  (void)!send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (logger) logger(req, res, milliseconds(0));
  shutdown(fd, SHUT_WR);
  c.lingering = true;
  c.linger_until = Clock::now() + kLinger;
}

void HttpServer::Impl::on_event(Connection& c) {
  char buffer[kReadBytes];
  const ssize_t n = recv(c.fd, buffer, sizeof buffer, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n < 0) return close_connection(c);  // reset
  if (c.lingering) {
    if (n == 0) close_connection(c);
    return;
  }
  if (n == 0) c.eof = true;
  else c.in.append(buffer, size_t(n));
  advance(c);
}

// Parses what has arrived; a complete request (or one refused) goes to a worker.
void HttpServer::Impl::advance(Connection& c) {
  if (!c.next.started && c.in.size() > c.at) {
    c.next.started = true;
    c.next.deadline = Clock::now() + seconds(limits.read_timeout_seconds);
  }
  std::optional<Refusal> refusal = parse(c);
  c.in.erase(0, c.at);
  c.at = 0;
  if (refusal || c.next.stage == Incoming::Stage::Done) return dispatch(c, std::move(refusal));
  // Expect: 100-continue (curl sends it before a body over 1 KiB, and waits a second for it).
  if (c.next.stage != Incoming::Stage::Head && !c.next.continue_sent &&
      lower(c.next.req.get_header_value("Expect")) == "100-continue") {
    c.next.continue_sent = true;
    const std::string go = "HTTP/1.1 100 Continue\r\n\r\n";
    (void)!send(c.fd, go.data(), go.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  if (c.eof) close_connection(c);  // gone before (or in the middle of) a request
}

std::optional<Refusal> HttpServer::Impl::parse(Connection& c) {
  Incoming& r = c.next;
  std::string_view rest = std::string_view(c.in).substr(c.at);
  if (r.stage == Incoming::Stage::Head) {
    // Blank lines before a request are allowed (RFC 9112 2.2).
    while (rest.substr(0, 2) == "\r\n") {
      rest.remove_prefix(2);
      c.at += 2;
    }
    const size_t end = rest.find("\r\n\r\n");
    if (end == std::string_view::npos) {
      if (rest.size() > kMaxHead) return Refusal{431, "the request line and headers are over 16 KiB"};
      return std::nullopt;
    }
    if (end > kMaxHead) return Refusal{431, "the request line and headers are over 16 KiB"};
    if (auto refused = parse_head(c, rest.substr(0, end + 2))) return refused;
    c.at += end + 4;
    rest = std::string_view(c.in).substr(c.at);
  }
  if (r.stage == Incoming::Stage::Body) {
    if (rest.size() < r.length) return std::nullopt;
    r.req.body.assign(rest.substr(0, r.length));
    c.at += r.length;
    r.stage = Incoming::Stage::Done;
    return std::nullopt;
  }
  return parse_chunks(c);
}

std::optional<Refusal> HttpServer::Impl::parse_head(Connection& c, std::string_view head) {
  Incoming& r = c.next;
  httplib::Request& req = r.req;
  const size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const size_t sp1 = line.find(' '), sp2 = line.find(' ', sp1 == line.npos ? line.npos : sp1 + 1);
  if (sp1 == line.npos || sp2 == line.npos || line.find(' ', sp2 + 1) != line.npos)
    return Refusal{400, "the request line is not METHOD TARGET HTTP/1.1"};
  req.method = std::string(line.substr(0, sp1));
  req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  req.version = std::string(line.substr(sp2 + 1));
  if (req.method.empty() || req.target.empty() || req.target[0] != '/')
    return Refusal{400, "the request line is not METHOD TARGET HTTP/1.1"};
  if (req.version != "HTTP/1.1" && req.version != "HTTP/1.0")
    return Refusal{505, "r1pi speaks HTTP/1.1 (and 1.0), not " + req.version};
  req.path = req.target.substr(0, req.target.find('?'));
  for (size_t from = line_end + 2; from < head.size();) {
    const size_t to = head.find("\r\n", from);
    const std::string_view field = head.substr(from, to - from);
    from = to + 2;
    const size_t colon = field.find(':');
    if (colon == 0 || colon == field.npos || field.substr(0, colon).find_first_of(" \t") != field.npos)
      return Refusal{400, "a header line is not NAME: VALUE"};
    req.headers.emplace(std::string(field.substr(0, colon)), trimmed(field.substr(colon + 1)));
  }
  req.remote_addr = c.peer;
  req.remote_port = c.peer_port;
  req.local_addr = c.local;
  req.local_port = c.local_port;

  const bool chunked = req.has_header("Transfer-Encoding");
  if (chunked && lower(req.get_header_value("Transfer-Encoding")) != "chunked")
    return Refusal{501, "Transfer-Encoding: r1pi reads chunked, nothing else"};
  const size_t lengths = req.get_header_value_count("Content-Length");
  if (chunked && lengths > 0) return Refusal{400, "a request with both Content-Length and Transfer-Encoding"};
  r.length = 0;
  for (size_t i = 0; i < lengths; ++i) {
    const std::string v = req.get_header_value("Content-Length", i);
    // Digits only (no sign, no spaces inside); 18 of them at most, which no limit reaches.
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != v.npos)
      return Refusal{400, "Content-Length must be decimal digits, not '" + v + "'"};
    const size_t n = std::stoull(v);
    if (i > 0 && n != r.length) return Refusal{400, "two Content-Length headers that differ"};
    r.length = n;
  }
  if (r.length > limits.max_body_bytes)
    return Refusal{413, "the request body is " + std::to_string(r.length) + " bytes; the limit is " +
                            std::to_string(limits.max_body_bytes)};
  r.stage = chunked ? Incoming::Stage::ChunkSize : r.length > 0 ? Incoming::Stage::Body : Incoming::Stage::Done;
  return std::nullopt;
}

// A chunked body (RFC 9112 7.1), decoded as it comes; over max_body_bytes is 413 however small
// its chunks.
std::optional<Refusal> HttpServer::Impl::parse_chunks(Connection& c) {
  Incoming& r = c.next;
  std::string& body = r.req.body;
  for (;;) {
    const std::string_view rest = std::string_view(c.in).substr(c.at);
    switch (r.stage) {
      case Incoming::Stage::ChunkSize: {
        const size_t end = rest.find("\r\n");
        if (end == rest.npos) {
          if (rest.size() > 1024) return Refusal{400, "a chunk size line over 1 KiB"};
          return std::nullopt;
        }
        std::string_view digits = rest.substr(0, std::min(end, rest.find(';')));
        digits = std::string_view(digits.data(), trimmed(digits).size());
        if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789abcdefABCDEF") != digits.npos)
          return Refusal{400, "a chunk size that is not hexadecimal"};
        r.length = std::stoull(std::string(digits), nullptr, 16);
        if (r.length > limits.max_body_bytes - body.size())
          return Refusal{413, "the chunked request body is over the limit of " +
                                  std::to_string(limits.max_body_bytes) + " bytes"};
        c.at += end + 2;
        r.stage = r.length == 0 ? Incoming::Stage::Trailer : Incoming::Stage::ChunkData;
        break;
      }
      case Incoming::Stage::ChunkData: {
        const size_t n = std::min(r.length, rest.size());
        body.append(rest.substr(0, n));
        c.at += n;
        r.length -= n;
        if (r.length > 0) return std::nullopt;
        r.stage = Incoming::Stage::ChunkEnd;
        break;
      }
      case Incoming::Stage::ChunkEnd:
        if (rest.size() < 2) return std::nullopt;
        if (rest.substr(0, 2) != "\r\n") return Refusal{400, "a chunk does not end with CRLF"};
        c.at += 2;
        r.stage = Incoming::Stage::ChunkSize;
        break;
      case Incoming::Stage::Trailer: {  // trailer fields are read and ignored
        const size_t end = rest.find("\r\n");
        if (end == rest.npos) {
          if (rest.size() > kMaxHead) return Refusal{431, "the chunked body's trailer is over 16 KiB"};
          return std::nullopt;
        }
        c.at += end + 2;
        if (end == 0) {
          r.stage = Incoming::Stage::Done;
          return std::nullopt;
        }
        break;
      }
      default:
        return std::nullopt;
    }
  }
}

void HttpServer::Impl::dispatch(Connection& c, std::optional<Refusal> refusal) {
  c.busy = true;
  watch(c, false);
  httplib::Request req = std::move(c.next.req);
  c.next = Incoming{};
  pool->enqueue([this, &c, req = std::move(req), refusal = std::move(refusal), arrived = Clock::now()]() mutable {
    answer(c, std::move(req), std::move(refusal), arrived);
  });
}

void HttpServer::Impl::resume(Connection& c) {
  c.busy = false;
  if (c.close_after && !c.linger_after) return close_connection(c);
  watch(c, true);
  if (c.close_after) {
    // What the client still sends of a refused request is read and dropped for a while (closing
    // with unread input would reset the connection, and the client might lose the answer).
    shutdown(c.fd, SHUT_WR);
    c.lingering = true;
    c.linger_until = Clock::now() + kLinger;
    return;
  }
  c.idle_since = Clock::now();
  // A request pipelined behind the one answered is already here: it is next, in order.
  if (c.in.size() > 0 || c.eof) advance(c);
}

void HttpServer::Impl::sweep() {
  const Clock::time_point now = Clock::now();
  const auto idle_limit =
      connections.size() > limits.max_connections / 2 ? kCrowdedIdle : seconds(limits.keep_alive_seconds);
  std::vector<Connection*> expired, slow;
  for (auto& [fd, c] : connections) {
    if (c->busy) continue;
    if (c->lingering ? now >= c->linger_until : !c->next.started && now - c->idle_since >= idle_limit)
      expired.push_back(c.get());
    else if (!c->lingering && c->next.started && now >= c->next.deadline)
      slow.push_back(c.get());
  }
  for (Connection* c : expired) close_connection(*c);
  for (Connection* c : slow)
    dispatch(*c, Refusal{408, "the request did not arrive within " + std::to_string(limits.read_timeout_seconds) + " s"});
}

void HttpServer::Impl::close_connection(Connection& c) {
  const int fd = c.fd;
  if (--per_address[c.peer] == 0) per_address.erase(c.peer);
  close(fd);  // (which also takes it out of the epoll set)
  connections.erase(fd);
}

// ---------------------------------------------------------------- the workers

void HttpServer::Impl::route(const httplib::Request& req, httplib::Response& res, std::string& message) {
  if (pre_routing && pre_routing(req, res)) return;
  const bool get = req.method == "GET" || req.method == "HEAD";
  const auto& routes = get ? gets : posts;
  const auto handler = routes.find(req.path);
  if (handler != routes.end() && (get || req.method == "POST")) {
    try {
      handler->second(req, res);
    } catch (const std::exception& e) {
      res = httplib::Response();
      res.status = 500;
      message = e.what();
    }
    return;
  }
  const bool known = gets.count(req.path) > 0 || posts.count(req.path) > 0;
  res.status = known ? 405 : 404;
  if (known) message = req.method + " " + req.path + ": method not allowed";
}

std::string HttpServer::Impl::serialized_head(const httplib::Request& req, const httplib::Response& res, bool keep,
                                              bool streamed) {
  std::string head = "HTTP/1.1 " + std::to_string(res.status) + " " + reason(res.status) + "\r\n";
  for (const auto& [name, value] : res.headers) {
    const std::string n = lower(name);
    if (n != "content-length" && n != "connection" && n != "transfer-encoding") head += name + ": " + value + "\r\n";
  }
  if (!streamed) head += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  else if (req.version == "HTTP/1.1") head += "Transfer-Encoding: chunked\r\n";
  head += keep ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return head;
}

bool HttpServer::Impl::write_response(int fd, const httplib::Request& req, httplib::Response& res, bool keep) {
  const bool streamed = bool(res.content_provider_);
  if (!streamed) {
    std::string bytes = serialized_head(req, res, keep, false);
    if (req.method != "HEAD") bytes += res.body;
    return send_all(fd, bytes, write_ms());
  }
  // A streamed answer (server-sent events): chunked; to an HTTP/1.0 client, raw until the close.
  const bool chunked = req.version == "HTTP/1.1";
  if (!send_all(fd, serialized_head(req, res, keep, true), write_ms())) return false;
  bool ok = true, done = false;
  httplib::DataSink sink;
  sink.write = [&](const char* data, size_t n) {
    if (!ok) return false;
    if (n == 0) return true;
    char size[24];
    const std::string framed = chunked ? std::string(size, size_t(std::snprintf(size, sizeof size, "%zx\r\n", n))) +
                                             std::string(data, n) + "\r\n"
                                       : std::string(data, n);
    ok = send_all(fd, framed, write_ms());
    return ok;
  };
  sink.done = [&] {
    if (done) return;
    done = true;
    if (ok && chunked) ok = send_all(fd, "0\r\n\r\n", write_ms());
  };
  sink.is_writable = [&] { return ok; };
  for (size_t offset = 0; ok && !done;)
    if (!res.content_provider_(offset, 0, sink)) ok = false;
  res.content_provider_success_ = ok && done;
  return ok && done;
}

void HttpServer::Impl::answer(Connection& c, httplib::Request req, std::optional<Refusal> refusal,
                              Clock::time_point arrived) {
  {
    httplib::Response res;
    std::string message;
    if (refusal) {
      res.status = refusal->status;
      message = refusal->message;
    } else {
      t_current_socket = c.fd;
      route(req, res, message);
      t_current_socket = -1;
      if (res.status == -1) res.status = 200;  // httplib::Response's "not set"
    }
    fill_error(res, message);
    // The connection stays open for more requests unless either side said otherwise; a refused
    // request may have left a body unread, so its connection closes.
    const bool keep = !refusal && req.version == "HTTP/1.1" && lower(req.get_header_value("Connection")) != "close" &&
                      lower(res.get_header_value("Connection")) != "close" && !stopping;
    const bool written = write_response(c.fd, req, res, keep);
    if (logger) logger(req, res, std::chrono::duration_cast<milliseconds>(Clock::now() - arrived));
    c.close_after = !keep || !written;
    c.linger_after = refusal.has_value() && written;
  }  // (the response's content provider is released before the connection goes back)
  give_back(c);
}

void HttpServer::Impl::give_back(Connection& c) {
  std::lock_guard lock(returned_mutex);
  returned.push_back(&c);
  const uint64_t one = 1;
  (void)!write(wake_fd, &one, sizeof one);
}

}  // namespace r1pi
