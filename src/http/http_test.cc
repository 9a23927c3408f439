// The libcurl client against loopback sockets: a call that never reached a server is told apart
// from one that failed after the server may have taken it (what a retry must know).
#include "http/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

namespace torchx::internal {
namespace {

// A loopback TCP socket bound to a free port; listening when asked.
struct LoopbackSocket {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  explicit LoopbackSocket(bool listen) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    if (listen) ::listen(fd, 1);
  }
  ~LoopbackSocket() { ::close(fd); }
};

Result<HttpResponse> Get(int port) {
  HttpRequest request{"GET", "http://127.0.0.1:" + std::to_string(port) + "/v1/x", "", "application/json", 5000, {}};
  return MakeCurlHttpClient()->Call(HttpTransport{}, request, "test server");
}

TEST(CurlHttpClient, ARefusedConnectionWasNotSent) {
  int port = LoopbackSocket(false).port;  // bound, then closed: nothing listens there
  auto resp = Get(port);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(WasNotSent(resp.error())) << resp.error().message();
  EXPECT_NE(resp.error().message().find("test server: "), std::string::npos);
}

TEST(CurlHttpClient, AConnectionDroppedAfterTheRequestMayHaveBeenTaken) {
  LoopbackSocket server(true);
  std::thread drop([&] {
    int conn = ::accept(server.fd, nullptr, nullptr);
    char buf[4096];
    (void)::read(conn, buf, sizeof(buf));  // the request arrived; no answer
    ::close(conn);
  });
  auto resp = Get(server.port);
  drop.join();
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(WasNotSent(resp.error())) << resp.error().message();
}

TEST(CurlHttpClient, OnlyTheMarkedErrorReadsAsNotSent) {
  EXPECT_TRUE(WasNotSent(NotSentError("x", "Couldn't connect to server")));
  EXPECT_FALSE(WasNotSent(UnavailableError("x: Couldn't connect to server")));
  EXPECT_FALSE(WasNotSent(InvalidArgumentError("x (the request was not sent)")));
}

}  // namespace
}  // namespace torchx::internal
