#include "ui/client_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>

namespace torchx::ui {
namespace {

// The port and the address (as text) of one end of a socket; port -1 for none or not IP.
std::pair<int, std::string> End(int fd, bool peer) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len)
                : ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (rc != 0) return {-1, ""};
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    return {ntohs(a->sin_port), text};
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    return {ntohs(a->sin6_port), text};
  }
  return {-1, ""};
}

}  // namespace

std::optional<int> FindClientSocket(int local_port, const std::string& remote_addr, int remote_port) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    int fd = std::atoi(it->path().filename().c_str());
    std::error_code lost;
    std::string target = std::filesystem::read_symlink(it->path(), lost).string();
    if (!target.starts_with("socket:")) continue;
    if (End(fd, false).first != local_port) continue;
    auto [port, addr] = End(fd, true);
    if (port == remote_port && addr == remote_addr) return fd;
  }
  return std::nullopt;
}

bool ClientHasLeft(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;  // nothing to read: still waiting
  if (p.revents & (POLLERR | POLLHUP | POLLRDHUP | POLLNVAL)) return true;
  char byte = 0;
  // Readable: more of a request (a pipelining client) is not a departure; end-of-file is.
  return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace torchx::ui
