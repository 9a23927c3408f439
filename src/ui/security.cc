#include "ui/security.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace torchx::ui {

namespace fs = std::filesystem;

namespace {

Status Denied(std::string msg) { return Status(StatusCode::kPermissionDenied, std::move(msg)); }

bool IsMutation(std::string_view method) { return method != "GET" && method != "HEAD" && method != "OPTIONS"; }

bool IsApi(std::string_view path) { return path.starts_with("/api/"); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::strchr(" \t\r\n", s.front()) && s.front()) s.remove_prefix(1);
  while (!s.empty() && std::strchr(" \t\r\n", s.back()) && s.back()) s.remove_suffix(1);
  return s;
}

// The value of cookie `name` in a Cookie header ("a=1; b=2").
std::string_view CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view pair = Trim(header.substr(0, semi));
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) return pair.substr(eq + 1);
    if (semi == std::string_view::npos) break;
    header.remove_prefix(semi + 1);
  }
  return {};
}

bool HeaderTokenMatches(const SecurityPolicy& p, const RequestHeaders& r) {
  if (p.token.empty()) return false;
  if (r.authorization.starts_with("Bearer ") && ConstantTimeEquals(Trim(r.authorization.substr(7)), p.token)) {
    return true;
  }
  return !r.token_header.empty() && ConstantTimeEquals(r.token_header, p.token);
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Verdict CheckRequest(const SecurityPolicy& p, const RequestHeaders& r) {
  if (!p.allowed_hosts.empty() && !p.allowed_hosts.contains(r.host)) {
    return {403, "Host '" + std::string(r.host) + "' is not this server's; open it by the address it printed", false};
  }
  // A page's own requests carry its origin, which is the address it was opened by.
  if (!r.origin.empty() && r.origin != "http://" + std::string(r.host)) {
    return {403, "cross-origin request from '" + std::string(r.origin) + "' refused", false};
  }
  // Browsers say where a request comes from; scripts send nothing. A page on another site (or on
  // another port of this host: the same "site") must not read or drive the API.
  if (IsApi(r.path) && !r.sec_fetch_site.empty() && r.sec_fetch_site != "same-origin" && r.sec_fetch_site != "none") {
    return {403, "cross-site request (" + std::string(r.sec_fetch_site) + ") refused", false};
  }
  bool header_token = HeaderTokenMatches(p, r);
  if (r.peer && *r.peer != p.owner && !header_token) {
    return {403, "this server is another user's: send its token (`Authorization: Bearer <token>`)", false};
  }
  Verdict allowed;
  if (p.token_required && !header_token) {
    bool cookie_token = !p.session.empty() && ConstantTimeEquals(CookieValue(r.cookie, p.cookie_name), p.session);
    bool query_token = !p.token.empty() && !r.query_token.empty() && ConstantTimeEquals(r.query_token, p.token);
    if (!cookie_token && !query_token) {
      return {401, "this server needs its token: open the URL it printed, or send `Authorization: Bearer <token>`",
              false};
    }
    allowed.set_cookie = query_token && !cookie_token;
  }
  bool csrf = !p.csrf_token.empty() && ConstantTimeEquals(r.csrf_header, p.csrf_token);
  if (r.loads_code && !header_token && !csrf) {
    return {401,
            "loading a component from a file runs its code: send the page's X-Torchx-CSRF header or the API "
            "token (`Authorization: Bearer <token>`)",
            false};
  }
  if (IsMutation(r.method) && !header_token) {
    if (p.csrf_token.empty() || !ConstantTimeEquals(r.csrf_header, p.csrf_token)) {
      return {403, "a request that changes anything needs the X-Torchx-CSRF header of the page or the API token",
              false};
    }
  }
  return allowed;
}

std::optional<uid_t> PeerUidFromProcNet(std::string_view table, int client_port, int server_port) {
  // Rows: "sl local_address rem_address st queues tr:when retrnsmt uid ...", addresses as
  // HEXIP:HEXPORT. The client's socket has the client's port locally and the server's remotely.
  auto port_of = [](std::string_view address) -> long {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return -1;
    return std::strtol(std::string(address.substr(colon + 1)).c_str(), nullptr, 16);
  };
  size_t line_start = table.find('\n');  // the header
  while (line_start != std::string_view::npos && line_start < table.size()) {
    size_t line_end = table.find('\n', line_start + 1);
    std::string line(table.substr(
        line_start + 1, line_end == std::string_view::npos ? std::string_view::npos : line_end - line_start - 1));
    std::istringstream fields(line);
    std::string sl, local, remote, st, queues, timer, retransmits, uid;
    if (fields >> sl >> local >> remote >> st >> queues >> timer >> retransmits >> uid &&
        port_of(local) == client_port && port_of(remote) == server_port) {
      return static_cast<uid_t>(std::strtoul(uid.c_str(), nullptr, 10));
    }
    line_start = line_end;
  }
  return std::nullopt;
}

std::optional<uid_t> SockDiagPeerUid(const std::string& client_addr, int client_port, const std::string& server_addr,
                                     int server_port) {
  struct Request {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } request{};
  inet_diag_sockid& id = request.body.id;
  // The client's socket: its own address and port are the source, the server's the destination.
  int family = client_addr.find(':') == std::string::npos ? AF_INET : AF_INET6;
  if (::inet_pton(family, client_addr.c_str(), id.idiag_src) != 1 ||
      ::inet_pton(family, server_addr.c_str(), id.idiag_dst) != 1 || client_port <= 0 || client_port > 65535 ||
      server_port <= 0 || server_port > 65535) {
    return std::nullopt;
  }
  id.idiag_sport = htons(static_cast<uint16_t>(client_port));
  id.idiag_dport = htons(static_cast<uint16_t>(server_port));
  id.idiag_cookie[0] = id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  request.body.sdiag_family = static_cast<uint8_t>(family);
  request.body.sdiag_protocol = IPPROTO_TCP;
  request.body.idiag_states = ~0u;
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST;  // no NLM_F_DUMP: the kernel looks the one socket up

  int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return std::nullopt;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  timeval limit{1, 0};  // the kernel answers at once; a hung socket must not hold a request
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::optional<uid_t> uid;
  if (::sendto(fd, &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) ==
      static_cast<ssize_t>(sizeof request)) {
    alignas(nlmsghdr) char answer[8192];
    ssize_t n;
    do {
      n = ::recv(fd, answer, sizeof answer, 0);
    } while (n < 0 && errno == EINTR);
    // One message: the socket, or NLMSG_ERROR when there is no such socket.
    const auto* h = reinterpret_cast<const nlmsghdr*>(answer);
    size_t need = NLMSG_LENGTH(sizeof(inet_diag_msg));
    if (n >= static_cast<ssize_t>(need) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY && h->nlmsg_len >= need &&
        h->nlmsg_len <= static_cast<size_t>(n)) {
      uid = static_cast<const inet_diag_msg*>(NLMSG_DATA(h))->idiag_uid;
    }
  }
  ::close(fd);
  return uid;
}

std::optional<uid_t> LoopbackPeerUid(const std::string& client_addr, int client_port, const std::string& server_addr,
                                     int server_port) {
  if (auto uid = SockDiagPeerUid(client_addr, client_port, server_addr, server_port)) return uid;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (auto uid = PeerUidFromProcNet(text.str(), client_port, server_port)) return uid;
  }
  return std::nullopt;
}

Result<std::string> RandomToken() {
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InternalError(std::string("cannot open /dev/urandom: ") + std::strerror(errno));
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::read(fd, bytes + got, sizeof bytes - got);
    if (n <= 0) {
      ::close(fd);
      return InternalError("cannot read /dev/urandom");
    }
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

Result<std::string> LoadOrCreateToken(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return Denied("ui token file " + path + " must be a file of yours that only you can read (mode " + mode +
                    "); run `chmod 600 " + path + "` or remove it for a new token");
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string token(Trim(text.str()));
    if (token.find_first_of(" \t\r\n") != std::string::npos || token.size() < 16) {
      return InvalidArgumentError("ui token file " + path +
                                  " does not hold a token (16 or more characters, one line); "
                                  "remove it for a new one");
    }
    return token;
  }
  TORCHX_ASSIGN_OR_RETURN(std::string token, RandomToken());
  fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return Denied("cannot create " + dir.string() + ": " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, ec);
  } else if (!dir.empty()) {
    // A new token goes only where nobody else may replace it.
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) == 0 && (ds.st_uid != ::getuid() || (ds.st_mode & 022) != 0)) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(ds.st_mode & 07777));
      return Denied("ui token directory " + dir.string() + " must be yours and writable only by you (mode " + mode +
                    "); pick another with --token_file");
    }
  }
  // Written whole under a temporary name, then renamed: never a partly written token file.
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Denied("cannot write ui token file " + tmp + ": " + std::strerror(errno));
  std::string line = token + "\n";
  bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Denied("cannot write ui token file " + path + ": " + std::strerror(errno));
  }
  return token;
}

std::string DefaultTokenPath() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return (fs::path(x) / "torchx" / "ui-token").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".config" / "torchx" / "ui-token").string();
}

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost") return true;
  std::string text(host);
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, text.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace torchx::ui
