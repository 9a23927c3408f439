// The dashboard's waiting room (waiting_room.h) over socket pairs: what is handed to the workers,
// when, and what is closed at its deadline.
#include "ui/waiting_room.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::ui {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class WaitingRoomTest : public ::testing::Test {
 protected:
  void SetUp() override {
    room_ = std::make_unique<WaitingRoom>(WaitingRoomOptions{300ms, 600ms, 64}, [this](int fd) {
      std::lock_guard<std::mutex> hold(mu_);
      handed_.push_back(fd);
      cv_.notify_all();
    });
    ASSERT_THAT(room_->Start(), IsOk());
  }
  void TearDown() override {
    room_.reset();
    for (int fd : handed_) ::close(fd);
    for (int fd : clients_) ::close(fd);
  }

  // A connection parked in the room; the client's end returned.
  int Connect() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    clients_.push_back(sv[0]);
    room_->Park(sv[1]);
    return sv[0];
  }
  void Send(int client, const std::string& bytes) {
    ASSERT_EQ(::send(client, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  bool HandedWithin(size_t count, std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, wait, [&] { return handed_.size() >= count; });
  }
  // What the server end said before it closed (waits up to `wait`); nullopt: still open.
  std::optional<std::string> ClosedSaying(int client, std::chrono::milliseconds wait) {
    std::string said;
    auto until = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < until) {
      pollfd p{client, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      char buf[512];
      ssize_t n = ::recv(client, buf, sizeof(buf), 0);
      if (n <= 0) return said;
      said.append(buf, static_cast<size_t>(n));
    }
    return std::nullopt;
  }

  std::unique_ptr<WaitingRoom> room_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> handed_;
  std::vector<int> clients_;
};

TEST_F(WaitingRoomTest, AConnectionIsHandedOverOnlyOnceItsHeadHasArrivedWhole) {
  int client = Connect();
  Send(client, "GET /api/v1/apps HTTP/1.1\r\nHost: x\r\n");
  EXPECT_FALSE(HandedWithin(1, 150ms)) << "the head has not ended";
  Send(client, "\r\n");
  ASSERT_TRUE(HandedWithin(1, 1s));
  EXPECT_EQ(room_->waiting(), 0u);
  // The head is still in the socket, whole, for the parser.
  char buf[128];
  ssize_t n = ::recv(handed_[0], buf, sizeof(buf), MSG_DONTWAIT);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "GET /api/v1/apps HTTP/1.1\r\nHost: x\r\n\r\n");
}

TEST_F(WaitingRoomTest, ARequestThereBeforeItWasParkedIsHandedOverAtOnce) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  clients_.push_back(sv[0]);
  Send(sv[0], "GET / HTTP/1.1\n\n");  // a bare LF ends a head too
  room_->Park(sv[1]);
  EXPECT_TRUE(HandedWithin(1, 1s));
}

TEST_F(WaitingRoomTest, AHeadTricklingPastItsDeadlineIsAnswered408AndClosed) {
  int slow = Connect();
  int quick = Connect();
  std::thread trickle([&] {
    for (int i = 0; i < 10; ++i) {
      if (::send(slow, "X", 1, MSG_NOSIGNAL) != 1) return;
      std::this_thread::sleep_for(100ms);
    }
  });
  Send(quick, "GET / HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(HandedWithin(1, 1s)) << "a trickling client holds no one up";
  auto said = ClosedSaying(slow, 3s);
  trickle.join();
  ASSERT_TRUE(said) << "still open past its deadline";
  EXPECT_THAT(*said, HasSubstr("408 Request Timeout"));
  EXPECT_EQ(handed_.size(), 1u);
}

TEST_F(WaitingRoomTest, AnIdleConnectionIsClosedAfterTheIdleTimeAndOneThatLeftAtOnce) {
  int idle = Connect();
  int gone = Connect();
  ::shutdown(gone, SHUT_WR);
  EXPECT_EQ(ClosedSaying(gone, 250ms), "") << "its end is seen before any timeout";
  auto said = ClosedSaying(idle, 2s);
  ASSERT_TRUE(said);
  EXPECT_EQ(*said, "") << "an idle connection is closed without an answer";
  EXPECT_EQ(room_->waiting(), 0u);
}

TEST_F(WaitingRoomTest, AHeadLargerThanTheLimitIsHandedToTheParserToRefuse) {
  int client = Connect();
  Send(client, "GET /" + std::string(100, 'a'));  // no end, past max_head_bytes (64)
  EXPECT_TRUE(HandedWithin(1, 1s));
}

TEST_F(WaitingRoomTest, PastItsSizeTheRoomEvictsTheConnectionWaitingLongestIdleOnesFirst) {
  room_ = std::make_unique<WaitingRoom>(WaitingRoomOptions{10s, 10s, 64, 2}, [](int fd) { ::close(fd); });
  ASSERT_THAT(room_->Start(), IsOk());
  int sending = Connect();
  Send(sending, "GET / HT");  // has started its head
  std::this_thread::sleep_for(100ms);
  int idle = Connect();
  int third = Connect();
  EXPECT_EQ(ClosedSaying(idle, 1s), "") << "the idle one goes first";
  EXPECT_FALSE(ClosedSaying(sending, 200ms));
  EXPECT_FALSE(ClosedSaying(third, 200ms));
  EXPECT_EQ(room_->waiting(), 2u);
}

TEST_F(WaitingRoomTest, StoppingClosesEveryConnectionAndWhatIsParkedAfter) {
  int waiting = Connect();
  room_->Stop();
  EXPECT_EQ(ClosedSaying(waiting, 1s), "");
  int late = Connect();
  EXPECT_EQ(ClosedSaying(late, 1s), "");
}

}  // namespace
}  // namespace torchx::ui
