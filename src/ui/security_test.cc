// Who may talk to `torchx ui`: each rule of security.h on its own.
#include "ui/security.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::ui {
namespace {

using ::testing::HasSubstr;

SecurityPolicy Loopback() {
  SecurityPolicy p;
  p.token_required = false;
  p.csrf_token = "csrf-123";
  p.allowed_hosts = {"127.0.0.1:8480", "localhost:8480"};
  p.cookie_name = "torchx_ui_8480";
  return p;
}

SecurityPolicy Remote() {
  SecurityPolicy p = Loopback();
  p.token_required = true;
  p.token = "secret-token-0123456789";
  p.session = "session-of-this-run";
  p.allowed_hosts.clear();
  return p;
}

RequestHeaders Get(std::string_view path = "/api/v1/apps") {
  RequestHeaders r;
  r.method = "GET";
  r.path = path;
  r.host = "127.0.0.1:8480";
  return r;
}

TEST(CheckRequest, LoopbackReadsNeedNothing) { EXPECT_EQ(CheckRequest(Loopback(), Get()).status, 0); }

TEST(CheckRequest, AForeignHostHeaderIsRefused) {  // DNS rebinding
  RequestHeaders r = Get();
  r.host = "evil.example:8480";
  Verdict v = CheckRequest(Loopback(), r);
  EXPECT_EQ(v.status, 403);
  EXPECT_THAT(v.message, HasSubstr("evil.example"));
}

TEST(CheckRequest, CrossOriginAndCrossSiteBrowserRequestsAreRefused) {
  RequestHeaders r = Get();
  r.origin = "http://evil.example";
  EXPECT_EQ(CheckRequest(Loopback(), r).status, 403);
  r.origin = "http://127.0.0.1:8480";
  EXPECT_EQ(CheckRequest(Loopback(), r).status, 0);
  r.origin = "";
  r.sec_fetch_site = "same-site";  // another port of this host
  EXPECT_EQ(CheckRequest(Loopback(), r).status, 403);
  r.sec_fetch_site = "same-origin";
  EXPECT_EQ(CheckRequest(Loopback(), r).status, 0);
  RequestHeaders page = Get("/");  // following a link to the dashboard is fine
  page.sec_fetch_site = "cross-site";
  EXPECT_EQ(CheckRequest(Loopback(), page).status, 0);
}

TEST(CheckRequest, ChangesNeedTheCsrfTokenOrTheApiToken) {
  RequestHeaders r = Get("/api/v1/apps/x/cancel");
  r.method = "POST";
  Verdict v = CheckRequest(Loopback(), r);
  EXPECT_EQ(v.status, 403);
  EXPECT_THAT(v.message, HasSubstr("X-Torchx-CSRF"));
  r.csrf_header = "wrong";
  EXPECT_EQ(CheckRequest(Loopback(), r).status, 403);
  r.csrf_header = "csrf-123";
  EXPECT_EQ(CheckRequest(Loopback(), r).status, 0);

  SecurityPolicy with_token = Loopback();
  with_token.token = "tok-0123456789abcdef";
  RequestHeaders scripted = Get("/api/v1/apps");
  scripted.method = "DELETE";
  scripted.authorization = "Bearer tok-0123456789abcdef";
  EXPECT_EQ(CheckRequest(with_token, scripted).status, 0);
}

TEST(CheckRequest, LoadingAComponentFromAFileNeedsTheCsrfTokenOrTheApiToken) {
  RequestHeaders r = Get("/api/v1/components/./train.py:main");
  r.loads_code = true;
  Verdict v = CheckRequest(Loopback(), r);
  EXPECT_EQ(v.status, 401);
  EXPECT_THAT(v.message, HasSubstr("runs its code"));
  r.csrf_header = "csrf-123";  // the Run page's
  EXPECT_EQ(CheckRequest(Loopback(), r).status, 0);
  SecurityPolicy with_token = Loopback();
  with_token.token = "tok-0123456789abcdef";
  RequestHeaders scripted = Get("/api/v1/components/./train.py:main");
  scripted.loads_code = true;
  scripted.authorization = "Bearer tok-0123456789abcdef";
  EXPECT_EQ(CheckRequest(with_token, scripted).status, 0);
}

TEST(CheckRequest, OffLoopbackEveryRequestNeedsTheToken) {
  SecurityPolicy p = Remote();
  RequestHeaders r = Get();
  r.host = "10.1.2.3:8480";
  EXPECT_EQ(CheckRequest(p, r).status, 401);
  r.authorization = "Bearer nope";
  EXPECT_EQ(CheckRequest(p, r).status, 401);
  r.authorization = "Bearer secret-token-0123456789";
  EXPECT_EQ(CheckRequest(p, r).status, 0);
  r.authorization = "";
  r.token_header = "secret-token-0123456789";
  EXPECT_EQ(CheckRequest(p, r).status, 0);
}

TEST(CheckRequest, OffLoopbackThePageOpenedWithTheTokenKeepsItInACookie) {
  SecurityPolicy p = Remote();
  RequestHeaders open = Get("/");
  open.host = "gpu-box:8480";
  open.query_token = "secret-token-0123456789";
  Verdict v = CheckRequest(p, open);
  EXPECT_EQ(v.status, 0);
  EXPECT_TRUE(v.set_cookie);

  RequestHeaders later = Get();
  later.host = "gpu-box:8480";
  later.cookie = "other=1; torchx_ui_8480=secret-token-0123456789";  // the token is not the cookie
  EXPECT_EQ(CheckRequest(p, later).status, 401);
  later.cookie = "other=1; torchx_ui_8480=session-of-this-run";
  EXPECT_EQ(CheckRequest(p, later).status, 0);
  // The cookie alone does not let a page change anything: CSRF still applies.
  later.method = "POST";
  EXPECT_EQ(CheckRequest(p, later).status, 403);
  later.csrf_header = "csrf-123";
  EXPECT_EQ(CheckRequest(p, later).status, 0);
}

TEST(CheckRequest, OnLoopbackAnotherUsersConnectionNeedsTheToken) {
  SecurityPolicy p = Loopback();
  p.owner = 1000;
  p.token = "tok-0123456789abcdef";
  RequestHeaders r = Get();
  r.peer = 1000;
  EXPECT_EQ(CheckRequest(p, r).status, 0);
  r.peer = 1001;
  Verdict v = CheckRequest(p, r);
  EXPECT_EQ(v.status, 403);
  EXPECT_THAT(v.message, HasSubstr("another user"));
  r.authorization = "Bearer tok-0123456789abcdef";
  EXPECT_EQ(CheckRequest(p, r).status, 0);
}

TEST(PeerUidFromProcNet, FindsTheClientsSocket) {
  std::string table =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:2120 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n"
      "   1: 0100007F:2120 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 2 1\n"
      "   2: 0100007F:D431 0100007F:2120 01 00000000:00000000 00:00000000 00000000  1001        0 3 1\n";
  EXPECT_EQ(PeerUidFromProcNet(table, 0xD431, 0x2120), 1001u);  // the client's row, not the server's
  EXPECT_EQ(PeerUidFromProcNet(table, 0xD432, 0x2120), std::nullopt);
}

TEST(LoopbackPeerUid, AConnectionOfOursIsOurs) {
  int server = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(server, 1), 0);
  ASSERT_EQ(::getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int client = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  sockaddr_in mine{};
  len = sizeof mine;
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&mine), &len), 0);
  int client_port = ntohs(mine.sin_port), server_port = ntohs(addr.sin_port);
  EXPECT_EQ(LoopbackPeerUid("127.0.0.1", client_port, "127.0.0.1", server_port), ::getuid());
  // The kernel's lookup by the four-tuple finds it; a port nobody uses is nobody's.
  EXPECT_EQ(SockDiagPeerUid("127.0.0.1", client_port, "127.0.0.1", server_port), ::getuid());
  EXPECT_EQ(SockDiagPeerUid("127.0.0.1", client_port, "127.0.0.1", server_port == 65535 ? 1 : server_port + 1),
            std::nullopt);
  EXPECT_EQ(SockDiagPeerUid("not an address", client_port, "127.0.0.1", server_port), std::nullopt);
  ::close(client);
  ::close(server);
}

TEST(LoopbackPeerUid, FindsAnIpv6Connection) {
  int server = ::socket(AF_INET6, SOCK_STREAM, 0);
  ASSERT_GE(server, 0);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  socklen_t len = sizeof addr;
  if (::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(server);
    GTEST_SKIP() << "no IPv6 loopback here";
  }
  ASSERT_EQ(::listen(server, 1), 0);
  ASSERT_EQ(::getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int client = ::socket(AF_INET6, SOCK_STREAM, 0);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  sockaddr_in6 mine{};
  len = sizeof mine;
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&mine), &len), 0);
  EXPECT_EQ(LoopbackPeerUid("::1", ntohs(mine.sin6_port), "::1", ntohs(addr.sin6_port)), ::getuid());
  ::close(client);
  ::close(server);
}

TEST(ConstantTimeEquals, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
}

TEST(LoadOrCreateToken, CreatesA0600FileOnceAndRefusesOneOthersCanRead) {
  testing::ScopedTempDir dir;
  std::string path = dir.path() + "/cfg/torchx/ui-token";
  auto token = LoadOrCreateToken(path);
  ASSERT_THAT(token, IsOk());
  EXPECT_EQ(token->size(), 64u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THAT(LoadOrCreateToken(path), IsOkAndHolds(*token));  // kept across restarts

  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_THAT(LoadOrCreateToken(path), StatusIs(StatusCode::kPermissionDenied, HasSubstr("0644")));
}

TEST(IsLoopbackHost, LoopbackNames) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.0.0.2"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_FALSE(IsLoopbackHost("127.example.com"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
}

}  // namespace
}  // namespace torchx::ui
