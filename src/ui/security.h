// Who may talk to `torchx ui`, decided from a request's headers alone (pure: unit-tested without
// a socket). docs/ui.md "Security" is the user's view of these rules:
// - on loopback, the Host header must name this server (a DNS-rebinding page cannot borrow it);
// - a browser request from another origin is refused (Origin, Sec-Fetch-Site);
// - off loopback (or with --token_required), every request carries the token (bearer header,
//   or the cookie set when the page was opened with ?token=);
// - a request that changes anything carries the token in a header, or the page's CSRF token, and
//   so does a read that loads a component from a file (its code runs; else 401);
// - on loopback, a connection from another user of the machine carries the token (on a shared
//   login node every user reaches 127.0.0.1, and the page, with its CSRF token, is theirs to read).
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::ui {

struct SecurityPolicy {
  /// Every request must carry the token (off loopback, or asked for on a shared machine).
  bool token_required = false;
  std::string token;       ///< the API token (required off loopback)
  std::string csrf_token;  ///< handed to the page; mutations from the page send it back
  /// Host header values ("127.0.0.1:8480"). Empty: any (off loopback, where the token guards
  /// every request and the server may be reached by any of the machine's names).
  std::set<std::string, std::less<>> allowed_hosts;
  std::string cookie_name;  ///< per port
  /// What the cookie holds for a browser that opened the page with the token: a secret of this
  /// server's run, not the token (cookies go to every port of a host, and the token submits jobs).
  std::string session;
  uid_t owner = 0;  ///< the user the server runs as
};

/// What a request shows of itself; absent headers are empty.
struct RequestHeaders {
  std::string_view method;
  std::string_view path;
  std::string_view host;
  std::string_view origin;
  std::string_view sec_fetch_site;
  std::string_view authorization;  ///< "Bearer <token>"
  std::string_view token_header;   ///< X-Torchx-Token
  std::string_view csrf_header;    ///< X-Torchx-CSRF
  std::string_view cookie;
  std::string_view query_token;  ///< ?token= (opening the page off loopback)
  std::optional<uid_t> peer;     ///< who opened the connection, where the kernel says (loopback)
  /// A read that runs code the request names (a component from a file: component_paths.h).
  bool loads_code = false;
};

struct Verdict {
  int status = 0;  ///< 0: allowed; else the HTTP status to answer
  std::string message;
  bool set_cookie = false;  ///< the page was opened with a valid ?token=: remember it
};

Verdict CheckRequest(const SecurityPolicy& policy, const RequestHeaders& request);

/// The user owning the loopback TCP connection from `client_addr`:`client_port` to
/// `server_addr`:`server_port` (numeric IPv4 or IPv6 addresses). Asked of the kernel by the
/// connection's four-tuple (sock_diag netlink: one lookup, whatever the number of sockets), else
/// read from its socket tables (/proc/net/tcp, tcp6: a walk of every socket on the host, which
/// was a tenth of an apps page); nullopt when neither has it.
std::optional<uid_t> LoopbackPeerUid(const std::string& client_addr, int client_port, const std::string& server_addr,
                                     int server_port);
/// The sock_diag lookup alone (for tests); nullopt when the kernel does not answer.
std::optional<uid_t> SockDiagPeerUid(const std::string& client_addr, int client_port, const std::string& server_addr,
                                     int server_port);
/// The same from one table's text (the parser, for tests).
std::optional<uid_t> PeerUidFromProcNet(std::string_view table, int client_port, int server_port);

/// Equality that takes the same time wherever the strings differ (tokens).
bool ConstantTimeEquals(std::string_view a, std::string_view b);
/// 32 random bytes as hex, from the kernel's generator.
Result<std::string> RandomToken();
/// The token kept in `path` (0600, owned by this user), else a new one written there (0600,
/// directories 0700). A file others can read or write is refused, naming it and its mode.
Result<std::string> LoadOrCreateToken(const std::string& path);
/// $XDG_CONFIG_HOME/torchx/ui-token, else ~/.config/torchx/ui-token.
std::string DefaultTokenPath();
/// Whether `host` (an address to bind) is "localhost" or a loopback address (127.0.0.0/8, ::1).
bool IsLoopbackHost(std::string_view host);

}  // namespace torchx::ui
