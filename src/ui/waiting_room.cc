// Connections waiting for their next request (see waiting_room.h).
#include "ui/waiting_room.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace torchx::ui {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::string_view kTimedOut =
    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 56\r\n\r\n"
    "the request did not arrive whole in time; send it again\n";

}  // namespace

bool HeadEnds(std::string_view bytes) {
  return bytes.find("\n\r\n") != std::string_view::npos || bytes.find("\n\n") != std::string_view::npos;
}

WaitingRoom::WaitingRoom(WaitingRoomOptions options, Ready ready)
    : options_(options), ready_(std::move(ready)), peek_(options.max_head_bytes) {}

WaitingRoom::~WaitingRoom() { Stop(); }

Status WaitingRoom::Start() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_ < 0 || wake_ < 0) return InternalError(fmt::format("ui: cannot watch connections: {}", strerror(errno)));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev) != 0) {
    return InternalError(fmt::format("ui: cannot watch connections: {}", strerror(errno)));
  }
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

void WaitingRoom::Park(int fd) {
  std::lock_guard<std::mutex> hold(mu_);
  if (stopped_ || epoll_ < 0) {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    return;
  }
  if (guests_.size() >= options_.max_waiting) {
    // The one waiting longest, an idle one before one sending its head.
    auto oldest = guests_.end();
    for (auto it = guests_.begin(); it != guests_.end(); ++it) {
      if (oldest == guests_.end() ||
          std::pair(it->second.started, it->second.since) < std::pair(oldest->second.started, oldest->second.since)) {
        oldest = it;
      }
    }
    Evict(oldest->first, oldest->second.started);
  }
  guests_[fd] = Guest{Clock::now(), false};
  // Edge-triggered: each arrival of bytes wakes the room once, and what it peeks stays in the
  // socket for the parser. Bytes there already (a pipelined request) are reported at once.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    guests_.erase(fd);
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }
}

void WaitingRoom::Stop() {
  {
    std::lock_guard<std::mutex> hold(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (wake_ >= 0) {
    uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof(one));
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> hold(mu_);
  for (const auto& [fd, _] : guests_) {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }
  guests_.clear();
  for (int* fd : {&epoll_, &wake_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

size_t WaitingRoom::waiting() const {
  std::lock_guard<std::mutex> hold(mu_);
  return guests_.size();
}

milliseconds WaitingRoom::NextCheck() {
  milliseconds next{1000};
  auto now = Clock::now();
  for (const auto& [fd, g] : guests_) {
    auto limit = g.started ? options_.head_deadline : options_.idle_timeout;
    auto left = std::chrono::duration_cast<milliseconds>(g.since + limit - now) + milliseconds(1);
    next = std::min(next, std::max(left, milliseconds(0)));
  }
  return next;
}

void WaitingRoom::Loop() {
  std::array<epoll_event, 64> events{};
  while (true) {
    milliseconds wait;
    {
      std::lock_guard<std::mutex> hold(mu_);
      if (stopped_) return;
      wait = NextCheck();
    }
    int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), static_cast<int>(wait.count()));
    std::lock_guard<std::mutex> hold(mu_);
    if (stopped_) return;
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd != wake_) Look(events[i].data.fd);
    }
    auto now = Clock::now();
    std::vector<std::pair<int, bool>> late;
    for (const auto& [fd, g] : guests_) {
      if (g.started && now - g.since >= options_.head_deadline) late.emplace_back(fd, true);
      if (!g.started && now - g.since >= options_.idle_timeout) late.emplace_back(fd, false);
    }
    for (const auto& [fd, answer] : late) Evict(fd, answer);
  }
}

void WaitingRoom::Look(int fd) {
  auto guest = guests_.find(fd);
  if (guest == guests_.end()) return;
  std::vector<char>& buf = peek_;
  ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    Evict(fd, false);  // gone
    return;
  }
  if (n <= 0) return;
  if (!guest->second.started) guest->second = Guest{Clock::now(), true};
  if (!HeadEnds(std::string_view(buf.data(), static_cast<size_t>(n))) && static_cast<size_t>(n) < buf.size()) return;
  epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  guests_.erase(guest);
  ready_(fd);
}

void WaitingRoom::Evict(int fd, bool answer_408) {
  epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  if (answer_408) {
    // What it sent is read first: a socket closed with unread bytes is reset, and the client
    // would lose the answer.
    char sink[4096];
    for (size_t read = 0; read < options_.max_head_bytes;) {
      ssize_t n = ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
      if (n <= 0) break;
      read += static_cast<size_t>(n);
    }
    (void)::send(fd, kTimedOut.data(), kTimedOut.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  guests_.erase(fd);
}

}  // namespace torchx::ui
