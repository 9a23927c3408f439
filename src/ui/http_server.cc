// The dashboard's HTTP connections (see http_server.h).
#include "ui/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

namespace torchx::ui {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a write waits for the client to take bytes (a reader that stopped reading).
constexpr milliseconds kWriteTimeout{5'000};

// Set on a worker by the logger when the response it wrote left the request's body unread (a
// request refused before routing: 401, 403, 411, 413, 415): those bytes must never be read as the
// connection's next request, so the connection ends with the response.
thread_local bool t_body_unread = false;

bool BodyUnread(const httplib::Request& req) {
  if (!req.body.empty()) return false;
  std::string length = req.get_header_value("Content-Length");
  return req.has_header("Transfer-Encoding") || (!length.empty() && length.find_first_not_of('0') != std::string::npos);
}

void Close(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

// One connection as cpp-httplib's parser and writer see it. Reads are buffered (the parser takes
// a head a byte at a time) and must all arrive by the request's deadline, head and body together;
// writes wait up to kWriteTimeout each for the client to take them.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int fd, milliseconds deadline) : fd_(fd), limit_(deadline) {}

  void StartRequest() { deadline_ = Clock::now() + limit_; }
  /// Bytes of the next request read already (a pipelined request).
  size_t buffered() const { return end_ - begin_; }
  bool BufferedHeadEnds() const { return HeadEnds(std::string_view(buf_.data() + begin_, buffered())); }

  bool is_readable() const override { return buffered() > 0 || Wait(POLLIN, Left()); }
  bool is_writable() const override { return Wait(POLLOUT, kWriteTimeout) && Open(); }

  ssize_t read(char* ptr, size_t size) override {
    if (buffered() == 0) {
      if (!Wait(POLLIN, Left())) return -1;  // its deadline passed
      ssize_t n = 0;
      do {
        n = ::recv(fd_, buf_.data(), buf_.size(), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    size_t take = std::min(size, buffered());
    std::memcpy(ptr, buf_.data() + begin_, take);
    begin_ += take;
    return static_cast<ssize_t>(take);
  }

  using httplib::Stream::write;
  ssize_t write(const char* ptr, size_t size) override {
    if (!Wait(POLLOUT, kWriteTimeout)) return -1;
    ssize_t n = 0;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(false, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  milliseconds Left() const {
    auto left = std::chrono::duration_cast<milliseconds>(deadline_ - Clock::now());
    return std::max(left, milliseconds(0));
  }
  bool Wait(short events, milliseconds timeout) const {
    pollfd p{fd_, events, 0};
    int n = 0;
    do {
      n = ::poll(&p, 1, static_cast<int>(timeout.count()));
    } while (n < 0 && errno == EINTR);
    return n == 1 && (p.revents & events) != 0;
  }
  // Not closed by the client: nothing to read, or bytes to read (not its end).
  bool Open() const {
    if (!Wait(POLLIN, milliseconds(0))) return true;
    char c = 0;
    ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  }
  void Address(bool peer, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    auto* sa = reinterpret_cast<sockaddr*>(&addr);
    if ((peer ? getpeername(fd_, sa, &len) : getsockname(fd_, sa, &len)) != 0) return;
    std::array<char, INET6_ADDRSTRLEN> text{};
    if (addr.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &in->sin_addr, text.data(), text.size());
      port = ntohs(in->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &in6->sin6_addr, text.data(), text.size());
      port = ntohs(in6->sin6_port);
    }
    ip = text.data();
  }

  int fd_;
  milliseconds limit_;
  Clock::time_point deadline_ = Clock::now();
  std::array<char, 4096> buf_{};
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace

// cpp-httplib's pool, which tells the server before it goes.
class HttpServer::Workers final : public httplib::TaskQueue {
 public:
  Workers(HttpServer& server, size_t threads) : server_(server), pool_(threads) {
    std::lock_guard<std::mutex> hold(server_.workers_mu_);
    server_.workers_ = this;
  }
  ~Workers() override { Forget(); }
  void enqueue(std::function<void()> fn) override { pool_.enqueue(std::move(fn)); }
  void shutdown() override {
    Forget();
    pool_.shutdown();
  }

 private:
  void Forget() {
    std::lock_guard<std::mutex> hold(server_.workers_mu_);
    if (server_.workers_ == this) server_.workers_ = nullptr;
  }
  HttpServer& server_;
  httplib::ThreadPool pool_;
};

HttpServer::HttpServer(WaitingRoomOptions room, size_t threads)
    : head_deadline_(room.head_deadline), room_(room, [this](int fd) {
        std::lock_guard<std::mutex> hold(workers_mu_);
        if (!workers_) return Close(fd);
        workers_->enqueue([this, fd] { Serve(fd); });
      }) {
  new_task_queue = [this, threads] { return new Workers(*this, threads); };
  set_logger([](const httplib::Request& req, const httplib::Response&) { t_body_unread = BodyUnread(req); });
}

HttpServer::~HttpServer() { room_.Stop(); }

bool HttpServer::process_and_close_socket(socket_t sock) {
  room_.Park(sock);  // served once its first request's head has arrived
  return true;
}

void HttpServer::Serve(int fd) {
  ConnectionStream stream(fd, head_deadline_);
  while (true) {
    stream.StartRequest();
    bool closed = false;
    t_body_unread = false;
    if (!process_request(stream, false, closed, nullptr) || closed || t_body_unread) break;
    if (stream.buffered() == 0) {
      room_.Park(fd);  // its next request waits there, holding no thread
      return;
    }
    // A pipelined request read already: served here only when its head is whole (the rest of one
    // cannot go back to the room, and a worker never waits for a head).
    if (!stream.BufferedHeadEnds()) break;
  }
  Close(fd);
}

}  // namespace torchx::ui
