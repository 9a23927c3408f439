#include "interrupt_watch.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace torchx::cli {
namespace {

// One watch at a time: the handler reaches its pipe through these.
int g_pipe[2] = {-1, -1};
std::atomic<int> g_signals{0};
struct sigaction g_old_int;
struct sigaction g_old_term;

constexpr char kStillCancelling[] = "torchx: still cancelling; the app's replicas are being stopped\n";

void OnSignal(int sig) {
  int saved = errno;
  if (g_signals.fetch_add(1) == 0) {
    char byte = static_cast<char>(sig);
    (void)!::write(g_pipe[1], &byte, 1);
  } else {
    (void)!::write(2, kStillCancelling, sizeof(kStillCancelling) - 1);
  }
  errno = saved;
}

const char* SignalName(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

}  // namespace

bool InterruptCancels(runner::Runner& runner, const std::vector<std::string>& schedulers) {
  for (const std::string& name : schedulers) {
    auto caps = runner.SchedulerCapabilities(name);
    if (caps && caps->Has(schedulers::Capability::kInterruptCancels)) return true;
  }
  return false;
}

InterruptWatch::InterruptWatch(runner::Runner& runner, bool cancel) : runner_(runner), cancel_(cancel) {
  g_signals = 0;
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
    g_pipe[0] = g_pipe[1] = -1;
    return;  // no watch: the signals keep their default action (the process ends, the app runs on)
  }
  thread_ = std::thread([this] { Watch(); });
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // the waiting thread's calls go on; the watch thread acts
  // A signal the launcher was started ignoring (a background job of a script) stays ignored.
  for (auto [sig, old] : {std::pair{SIGINT, &g_old_int}, std::pair{SIGTERM, &g_old_term}}) {
    sigaction(sig, nullptr, old);
    if (old->sa_handler != SIG_IGN) sigaction(sig, &sa, nullptr);
  }
}

InterruptWatch::~InterruptWatch() {
  LaunchOver(std::nullopt);  // a launch that failed (or was never armed): nothing to cancel
  Stop();
}

void InterruptWatch::Arm(std::string handle) { LaunchOver(std::move(handle)); }

void InterruptWatch::LaunchOver(std::optional<std::string> handle) {
  std::lock_guard lock(mu_);
  if (launch_over_) return;
  launch_over_ = true;
  handle_ = std::move(handle);
  launched_.notify_all();
}

void InterruptWatch::Stop() {
  if (!thread_.joinable()) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  if (g_signals.load() == 0) {
    char stop = 0;
    (void)!::write(g_pipe[1], &stop, 1);
  }
  thread_.join();  // after a signal, the watch thread ends the process
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

void InterruptWatch::SettleIfInterrupted() {
  // Interrupted: the app ended because of it, and the watch thread ends the process once it has
  // said so. Not: the wait is over, so a later signal has its usual effect.
  Stop();
}

void InterruptWatch::Watch() {
  char byte = 0;
  ssize_t n;
  do {
    n = ::read(g_pipe[0], &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1 || byte == 0) return;
  // A signal during the launch waits for it: the app it makes is the one to cancel.
  std::optional<std::string> handle;
  {
    std::unique_lock lock(mu_);
    launched_.wait(lock, [this] { return launch_over_; });
    handle = handle_;
  }
  if (handle) {
    Handle(byte, *handle);
  } else {
    EndBy(byte);
  }
}

void InterruptWatch::Handle(int sig, const std::string& handle) {
  const char* name = SignalName(sig);
  if (!cancel_) {
    std::fprintf(stderr, "\ntorchx: %s: stopped waiting; %s keeps running. Stop it with `torchx cancel %s`\n", name,
                 handle.c_str(), handle.c_str());
  } else {
    std::fprintf(stderr,
                 "\ntorchx: %s: cancelling %s (to leave an app running, start it without --wait and follow it with "
                 "`torchx log -t %s`)\n",
                 name, handle.c_str(), handle.c_str());
    std::fflush(stderr);
    auto outcome = runner_.RequestCancel(handle);
    if (!outcome) {
      std::fprintf(stderr, "torchx: error: cancelling %s: %s; run `torchx cancel %s`\n", handle.c_str(),
                   outcome.error().message().c_str(), handle.c_str());
    } else {
      // Wait for the end the cancel makes: the replicas are stopped when the app's state is.
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      std::optional<specs::AppState> state;
      while (std::chrono::steady_clock::now() < deadline) {
        auto status = runner_.Status(handle);
        if (status && !*status) break;  // gone: nothing left to stop
        if (status && specs::IsTerminal((*status)->state)) {
          state = (*status)->state;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (state) {
        std::fprintf(stderr, "torchx: %s %s\n", handle.c_str(), std::string(specs::AppStateName(*state)).c_str());
      } else {
        std::fprintf(stderr, "torchx: %s is still stopping; see `torchx status %s`\n", handle.c_str(), handle.c_str());
      }
    }
  }
  EndBy(sig);
}

void InterruptWatch::EndBy(int sig) {
  std::fflush(stdout);
  std::fflush(stderr);
  // Ended by the signal, as the caller sent it (a shell sees 130 or 143 and stops its script too).
  ::signal(sig, SIG_DFL);
  ::kill(::getpid(), sig);
  std::_Exit(128 + sig);
}

}  // namespace torchx::cli
