// epoll + signalfd + timerfd for the local supervisor (see event_loop.h).
#include "schedulers/local/event_loop.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace torchx::schedulers::local {

Result<std::unique_ptr<EventLoop>> EventLoop::Create(const std::vector<int>& signals) {
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : signals) sigaddset(&mask, sig);
  if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) return InternalError("sigprocmask failed");
  int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  int timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (sigfd < 0 || timerfd < 0 || epfd < 0) {
    std::string why = fmt::format("supervisor setup: {}", strerror(errno));
    for (int fd : {sigfd, timerfd, epfd}) {
      if (fd >= 0) ::close(fd);
    }
    return InternalError(why);
  }
  std::unique_ptr<EventLoop> loop(new EventLoop(epfd, sigfd, timerfd));
  loop->Watch(sigfd);
  loop->Watch(timerfd);
  return loop;
}

EventLoop::~EventLoop() {
  ::close(epfd_);
  ::close(sigfd_);
  ::close(timerfd_);
  if (tickerfd_ >= 0) ::close(tickerfd_);
}

void EventLoop::Watch(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
}

void EventLoop::Unwatch(int fd) { epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr); }

namespace {
timespec Seconds(double seconds) {
  timespec t{};
  t.tv_sec = static_cast<time_t>(seconds);
  t.tv_nsec = static_cast<long>((seconds - static_cast<double>(t.tv_sec)) * 1e9);
  return t;
}
}  // namespace

void EventLoop::ArmTimer(double seconds) {
  itimerspec t{};
  t.it_value = Seconds(seconds);
  if (t.it_value.tv_sec == 0 && t.it_value.tv_nsec == 0) t.it_value.tv_nsec = 1;  // zero would disarm
  timerfd_settime(timerfd_, 0, &t, nullptr);
}

void EventLoop::StartTicker(double first, double interval) {
  if (tickerfd_ < 0) {
    tickerfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (tickerfd_ < 0) return;  // no sampling rather than no supervisor
    Watch(tickerfd_);
  }
  itimerspec t{};
  t.it_value = Seconds(first);
  t.it_interval = Seconds(interval);
  if (t.it_value.tv_sec == 0 && t.it_value.tv_nsec == 0) t.it_value.tv_nsec = 1;
  timerfd_settime(tickerfd_, 0, &t, nullptr);
}

void EventLoop::DisarmTimer() {
  itimerspec t{};
  timerfd_settime(timerfd_, 0, &t, nullptr);
}

std::vector<EventLoop::Ready> EventLoop::Wait(int timeout_ms) {
  epoll_event events[64];
  int n = epoll_wait(epfd_, events, 64, timeout_ms);
  std::vector<Ready> ready;
  for (int k = 0; k < n; ++k) {
    int fd = events[k].data.fd;
    if (fd == sigfd_) {
      ready.push_back({Source::kSignal, fd});
    } else if (fd == timerfd_) {
      uint64_t expirations;
      ssize_t ignored = ::read(timerfd_, &expirations, sizeof(expirations));
      (void)ignored;
      ready.push_back({Source::kTimer, fd});
    } else if (fd == tickerfd_) {
      uint64_t expirations;
      ssize_t ignored = ::read(tickerfd_, &expirations, sizeof(expirations));
      (void)ignored;
      ready.push_back({Source::kTicker, fd});
    } else {
      ready.push_back({Source::kFd, fd});
    }
  }
  return ready;
}

std::vector<int> EventLoop::TakeSignals() {
  std::vector<int> signals;
  signalfd_siginfo si;
  while (::read(sigfd_, &si, sizeof(si)) == sizeof(si)) {
    if (si.ssi_signo == SIGTERM && si.ssi_code == SI_QUEUE && cancel_token_ >= 0 && si.ssi_int != cancel_token_) {
      ++dropped_cancels_;
      continue;
    }
    signals.push_back(static_cast<int>(si.ssi_signo));
  }
  return signals;
}

}  // namespace torchx::schedulers::local
