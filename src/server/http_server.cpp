#include "server/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "server/client_connection.h"
#include "server/http_request_parser.h"
#include "server/http_response_writer.h"
#include "server/listen_socket.h"
#include "server/request_memory.h"

namespace r1pi {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr size_t kReadBytes = 64 << 10;      // read at a time from one connection
constexpr size_t kKeptInput = 4 << 10;       // an emptied input buffer larger than this is freed
constexpr auto kCrowdedIdle = seconds(1);    // the idle timeout past half of max_connections
constexpr auto kLinger = seconds(1);         // reading (and dropping) what a refused client still sends
constexpr auto kSweep = milliseconds(100);   // how often timeouts are looked at

thread_local int t_current_socket = -1;  // HttpServer::current_socket

// Whether a request's or answer's header says value (in any case).
template <typename Message>
bool header_is(const Message& m, const char* name, const char* value) {
  return strcasecmp(m.get_header_value(name).c_str(), value) == 0;
}

}  // namespace

struct Connection {
  explicit Connection(size_t max_body_bytes) : next(max_body_bytes) {}
  int fd = -1;
  std::string peer, local;
  int peer_port = -1, local_port = -1;
  std::string in;  // read and not yet parsed: a head in pieces, a request pipelined behind another
  RequestParser next;
  bool started = false;        // next has had its first byte
  Clock::time_point deadline;  // ... and must be whole by then
  bool continue_sent = false;  // 100 Continue was sent for next
  size_t counted = 0;          // the bytes of in and next in the request memory
  Clock::time_point idle_since, linger_until;
  bool busy = false;       // a worker answers its request (the event thread leaves it alone)
  bool eof = false;        // the client sent all it will send
  bool lingering = false;  // refused: its input is dropped until it closes or kLinger ends
  // Set by the worker before it gives the connection back.
  bool close_after = false, linger_after = false;
};

struct HttpServer::Impl {
  explicit Impl(HttpLimits l) : limits(l), memory(l.max_buffered_bytes) {}
  HttpLimits limits;
  RequestMemory memory;  // the bytes of requests being received or answered
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
  void advance(Connection& c, std::string_view fresh);
  bool recount(Connection& c);
  void dispatch(Connection& c, std::optional<Refusal> refusal);
  void resume(Connection& c);
  void sweep();
  void watch(Connection& c, bool on);
  void close_connection(Connection& c);
  void refuse_at_accept(int fd, Connection& c);

  // ---- the workers ----
  void answer(Connection& c, httplib::Request req, std::optional<Refusal> refusal, Clock::time_point arrived);
  void route(const httplib::Request& req, httplib::Response& res, std::string& message);
  void give_back(Connection& c);

  void fill_error(httplib::Response& res, const std::string& message) const {
    if (res.status >= 400 && res.body.empty() && !res.content_provider_ && error_body)
      error_body(res, message.empty() ? default_message(res.status) : message);
  }
  int write_ms() const { return limits.write_timeout_seconds * 1000; }
};

HttpServer::HttpServer(HttpLimits limits) : impl_(std::make_unique<Impl>(limits)) {
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
  // Every held connection is a descriptor: the connection caps follow from their limit.
  if (impl_->limits.max_connections == 0) impl_->limits.max_connections = connections_the_descriptors_allow();
  impl_->listen_fd = listen_socket(host, port);
  return impl_->listen_fd < 0 ? -1 : port;
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
    auto c = std::make_unique<Connection>(limits.max_body_bytes);
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
  const std::string bytes = response_head(req, res, false, false) + res.body;
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
  advance(c, std::string_view(buffer, size_t(std::max<ssize_t>(n, 0))));
}

// Parses what has arrived (fresh: the bytes just read); a complete request (or one refused) goes
// to a worker.
void HttpServer::Impl::advance(Connection& c, std::string_view fresh) {
  if (!c.started && (!c.in.empty() || !fresh.empty())) {
    c.started = true;
    c.deadline = Clock::now() + seconds(limits.read_timeout_seconds);
  }
  // Fresh bytes are parsed where they lie unless input waits before them: a body's go straight
  // into its request, not through `in` as well.
  const bool waiting = !c.in.empty();
  if (waiting) c.in.append(fresh);
  const std::string_view input = waiting ? std::string_view(c.in) : fresh;
  size_t used = 0;
  std::optional<Refusal> refusal = c.next.parse(input, used);
  if (waiting) c.in.erase(0, used);
  else c.in.assign(input.substr(used));
  if (c.in.empty() && c.in.capacity() > kKeptInput) std::string().swap(c.in);
  if (!recount(c) && !refusal)
    refusal = Refusal{503, "the requests being received fill the server's memory for them (" +
                               std::to_string(memory.budget() >> 20) + " MiB)", true};
  if (refusal || c.next.done()) return dispatch(c, std::move(refusal));
  // Expect: 100-continue (curl sends it before a body over 1 KiB, and waits a second for it).
  if (c.next.past_head() && !c.continue_sent && header_is(c.next.request(), "Expect", "100-continue")) {
    c.continue_sent = true;
    const std::string go = "HTTP/1.1 100 Continue\r\n\r\n";
    (void)!send(c.fd, go.data(), go.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  if (c.eof) close_connection(c);  // gone before (or in the middle of) a request
}

// Counts the connection's buffers in the request memory as they are now; false when they grew
// past the budget (then they are counted as they were).
bool HttpServer::Impl::recount(Connection& c) {
  const size_t now = c.in.capacity() + c.next.body_bytes();
  if (now <= c.counted) {
    memory.release(c.counted - now);
  } else if (!memory.take(now - c.counted)) {
    return false;
  }
  c.counted = now;
  return true;
}

void HttpServer::Impl::dispatch(Connection& c, std::optional<Refusal> refusal) {
  c.busy = true;
  watch(c, false);
  httplib::Request req = c.next.take();
  c.started = c.continue_sent = false;
  // A refused request's body is never read: its memory goes now. An accepted one's stays counted
  // until its answer has been written (the worker releases it).
  if (refusal) std::string().swap(req.body);
  const size_t body = refusal ? 0 : std::min(req.body.capacity(), c.counted);
  c.counted -= body;
  recount(c);  // (only releases: what is left is the input behind the request)
  pool->enqueue([this, &c, req = std::move(req), refusal = std::move(refusal), arrived = Clock::now(), body]() mutable {
    answer(c, std::move(req), std::move(refusal), arrived);
    memory.release(body);
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
    std::string().swap(c.in);
    recount(c);
    return;
  }
  c.idle_since = Clock::now();
  // A request pipelined behind the one answered is already here: it is next, in order.
  if (!c.in.empty() || c.eof) advance(c, {});
}

void HttpServer::Impl::sweep() {
  const Clock::time_point now = Clock::now();
  const auto idle_limit =
      connections.size() > limits.max_connections / 2 ? kCrowdedIdle : seconds(limits.keep_alive_seconds);
  std::vector<Connection*> expired, slow;
  for (auto& [fd, c] : connections) {
    if (c->busy) continue;
    if (c->lingering ? now >= c->linger_until : !c->started && now - c->idle_since >= idle_limit)
      expired.push_back(c.get());
    else if (!c->lingering && c->started && now >= c->deadline)
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
  const size_t counted = c.counted;
  connections.erase(fd);
  memory.release(counted);  // (after the buffers are freed: a release may trim the heap)
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

void HttpServer::Impl::answer(Connection& c, httplib::Request req, std::optional<Refusal> refusal,
                              Clock::time_point arrived) {
  {
    httplib::Response res;
    std::string message;
    if (refusal) {
      res.status = refusal->status;
      message = refusal->message;
      if (refusal->retry) res.set_header("Retry-After", "1");
    } else {
      t_current_socket = c.fd;
      route(req, res, message);
      t_current_socket = -1;
      if (res.status == -1) res.status = 200;  // httplib::Response's "not set"
    }
    fill_error(res, message);
    // The connection stays open for more requests unless either side said otherwise; a refused
    // request may have left a body unread, so its connection closes.
    const bool keep = !refusal && req.version == "HTTP/1.1" && !header_is(req, "Connection", "close") &&
                      !header_is(res, "Connection", "close") && !stopping;
    const bool written = write_response(c.fd, req, res, keep, write_ms());
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
