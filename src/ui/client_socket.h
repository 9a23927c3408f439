// Whether the client of a request still waits for its answer. cpp-httplib (0.11) hands a handler
// the request's addresses but not its connection, and says nothing when the client goes away
// before the answer; a call that takes a minute (a profile) would run on for nobody. So the
// connection is found among this process's sockets by its two ends, and watched: a peer that has
// closed it reads as end-of-file.
#pragma once

#include <optional>
#include <string>

namespace torchx::ui {

/// The descriptor of this process's TCP socket whose local port is `local_port` and whose peer is
/// `remote_addr`:`remote_port`; nullopt when there is none (the connection has closed already).
std::optional<int> FindClientSocket(int local_port, const std::string& remote_addr, int remote_port);

/// Whether the peer of `fd` has closed or reset its end (a pending read that returns nothing, or
/// an error), without taking anything from the socket.
bool ClientHasLeft(int fd);

}  // namespace torchx::ui
