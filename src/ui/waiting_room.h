// Where the dashboard's connections wait for their next request without holding a worker thread:
// one thread watches them all (epoll, edge-triggered) and hands a connection to the server's
// workers only once its request head has arrived whole (the blank line that ends it is in the
// socket's buffer, looked at with MSG_PEEK so the server's HTTP parser reads it all). A client that
// trickles its head, or connects and says nothing, holds a file descriptor here until its
// deadline, never a thread: a slow or hostile client cannot take the workers from the others, and
// no per-address bound is needed (a normal client behind the same address is never refused).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "torchx/status.h"

namespace torchx::ui {

struct WaitingRoomOptions {
  /// A connection with no byte of a next request for this long is closed (HTTP keep-alive's end).
  std::chrono::milliseconds idle_timeout{5'000};
  /// A request head not whole this long after its first byte is closed, with a 408 answer.
  std::chrono::milliseconds head_deadline{10'000};
  /// A head this large without its end is handed over anyway: the parser answers it (431 or 414).
  size_t max_head_bytes = 16 * 1024;
  /// At most this many connections wait; one more evicts the one waiting longest (idle ones
  /// first), so waiting connections cannot take every file descriptor.
  size_t max_waiting = 4096;
};

/// Whether the end of a request head (an empty line; HTTP/1.1 allows a bare LF) is in `bytes`.
bool HeadEnds(std::string_view bytes);

class WaitingRoom {
 public:
  /// `ready(fd)` takes over a connection whose head has arrived (it is called on the room's
  /// thread, and must only hand the connection on).
  using Ready = std::function<void(int fd)>;
  WaitingRoom(WaitingRoomOptions options, Ready ready);
  /// Stops the thread and closes every connection still waiting.
  ~WaitingRoom();
  WaitingRoom(const WaitingRoom&) = delete;
  WaitingRoom& operator=(const WaitingRoom&) = delete;

  Status Start();
  /// Takes `fd` (a connected socket): it waits here for its next request, idle from now.
  void Park(int fd);
  /// As the destructor, before it: what is parked later is closed at once.
  void Stop();
  /// Connections waiting now.
  size_t waiting() const;

 private:
  struct Guest {
    std::chrono::steady_clock::time_point since;  ///< parked (idle) or its head's first byte
    bool started = false;                         ///< a byte of its head has arrived
  };
  void Loop();
  void Look(int fd);                      // on new bytes or a hang-up: hand over, or keep waiting
  void Evict(int fd, bool answer_408);    // the room's thread, mu_ held
  std::chrono::milliseconds NextCheck();  // mu_ held: until the earliest deadline

  WaitingRoomOptions options_;
  Ready ready_;
  int epoll_ = -1;
  int wake_ = -1;           // an eventfd that ends the thread's wait at Stop
  std::vector<char> peek_;  // the room's thread's buffer for a head's first bytes
  mutable std::mutex mu_;
  std::map<int, Guest> guests_;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace torchx::ui
