// cpp-httplib's server with the connection handling of the dashboard's own: connections wait for
// each request in a WaitingRoom (no thread held until its head has arrived whole, a deadline for
// it), and a request's head and body are read within a deadline, not only a per-read timeout (a
// client trickling a byte every few seconds would otherwise hold a thread for as long as it
// likes). cpp-httplib 0.11 has neither; its socket loop is the one virtual it leaves for this
// (process_and_close_socket), and the parsing, routing and responses stay its own.
#pragma once

#include <httplib.h>

#include <chrono>
#include <mutex>

#include "torchx/status.h"
#include "ui/waiting_room.h"

namespace torchx::ui {

class HttpServer final : public httplib::Server {
 public:
  /// `threads`: the workers that serve requests whose head has arrived.
  HttpServer(WaitingRoomOptions room, size_t threads);
  ~HttpServer() override;

  /// Before listening.
  Status StartRoom() { return room_.Start(); }
  /// Before stop(): every waiting connection closed, none handed to the workers any more.
  void StopRoom() { room_.Stop(); }
  size_t waiting() const { return room_.waiting(); }

 private:
  // cpp-httplib calls this on a worker for each accepted connection.
  bool process_and_close_socket(socket_t sock) override;
  // A connection whose request head has arrived: its requests served while the next one is
  // already read, then back to the room.
  void Serve(int fd);

  class Workers;
  // The workers while cpp-httplib's pool runs (it makes the pool when it starts listening and
  // deletes it when it stops); the room hands connections to them under workers_mu_.
  std::mutex workers_mu_;
  Workers* workers_ = nullptr;
  std::chrono::milliseconds head_deadline_;
  WaitingRoom room_;
};

}  // namespace torchx::ui
