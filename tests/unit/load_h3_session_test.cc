// H3Session without a network: what the client's first flight looks like,
// that nothing is taken before the handshake, that bad datagrams and a
// silent server end the connection with the right kind of error, and that
// a closed or discarded session reports exactly what was in flight.
#include "load/h3_session.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "load/clock.h"
#include "load/options.h"
#include "load/quic_tls.h"
#include "load/request_template.h"

namespace torii::load {
namespace {

const std::string kNoSave;  // no --save

struct RecordingSink final : RequestSink {
  std::vector<int> statuses;
  std::vector<ErrorKind> failures;
  int retries = 0;
  void completed(int64_t, int status) override { statuses.push_back(status); }
  void failed(int64_t, ErrorKind kind, const char*) override { failures.push_back(kind); }
  void retry(int64_t) override { ++retries; }
};

class H3SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto url = parse_url("https://localhost:8443/");
    ASSERT_TRUE(url);
    options_.urls.push_back(*url);
    options_.protocol = Protocol::h3;
    templates_.emplace(build_templates(options_, ""));
    auto tls = QuicTls::create();
    ASSERT_TRUE(tls) << tls.error();
    tls_ = std::move(*tls);
    local_.sin_family = remote_.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &local_.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &remote_.sin_addr);
    local_.sin_port = htons(40000);
    remote_.sin_port = htons(8443);
  }

  bool start(H3Session& s, int64_t now) {
    return s.start(reinterpret_cast<sockaddr*>(&local_), sizeof local_, reinterpret_cast<sockaddr*>(&remote_),
                   sizeof remote_, "localhost", tls_->credentials(), now);
  }

  Options options_;
  std::optional<RequestTemplates> templates_;
  std::unique_ptr<QuicTls> tls_;
  sockaddr_in local_{};
  sockaddr_in remote_{};
  RecordingSink sink_;
};

TEST_F(H3SessionTest, FirstFlightIsAPaddedInitialAndNothingIsTakenBeforeTheHandshake) {
  H3Session s(*templates_, 8, false, false, kNoSave, sink_);
  const int64_t now = now_ns();
  ASSERT_TRUE(start(s, now)) << s.error();
  EXPECT_FALSE(s.ready());
  EXPECT_EQ(s.capacity(), 0u);
  uint8_t pkt[1500];
  const ssize_t n = s.produce(pkt, sizeof pkt, now);
  ASSERT_GE(n, 1200);  // RFC 9000 14.1: a client's Initial datagram is padded to 1200 bytes
  EXPECT_EQ(pkt[0] & 0xc0, 0xc0);  // long header, fixed bit
  EXPECT_EQ(pkt[0] & 0x30, 0x00);  // Initial
  EXPECT_EQ((uint32_t(pkt[1]) << 24) | (uint32_t(pkt[2]) << 16) | (uint32_t(pkt[3]) << 8) | pkt[4], 1u);  // QUIC v1
  // A loss-recovery timer is set for that packet.
  EXPECT_GT(s.expiry(), now);
  EXPECT_LT(s.expiry(), now + 5 * kNsPerSec);
}

TEST_F(H3SessionTest, NoPacingBeforeTheHandshakeHasMeasuredTheRoundTrip) {
  // Paced from ngtcp2's initial RTT guess (333 ms), the 1200-byte Initial
  // would hold the client's next flight (its Finished and first request)
  // back by ~26 ms: every new connection's first request paid for it.
  H3Session s(*templates_, 1, false, false, kNoSave, sink_);
  const int64_t now = now_ns();
  ASSERT_TRUE(start(s, now));
  uint8_t pkt[1500];
  ASSERT_GE(s.produce(pkt, sizeof pkt, now), 1200);
  s.burst_sent(now);
  EXPECT_GT(s.expiry(), now + 100 * kNsPerMs);  // the loss timer, not a pacing slot
}

TEST_F(H3SessionTest, GarbageIsDroppedAndTheConnectionLivesOn) {
  H3Session s(*templates_, 1, false, false, kNoSave, sink_);
  const int64_t now = now_ns();
  ASSERT_TRUE(start(s, now));
  uint8_t pkt[1500];
  ASSERT_GT(s.produce(pkt, sizeof pkt, now), 0);
  const uint8_t garbage[64] = {0x40, 1, 2, 3};  // a short header for a connection it has no keys for
  EXPECT_TRUE(s.receive(garbage, sizeof garbage, now + 1000));
  EXPECT_FALSE(s.ready());
}

TEST_F(H3SessionTest, ASilentServerIsAHandshakeTimeout) {
  H3Session s(*templates_, 1, false, false, kNoSave, sink_);
  int64_t now = now_ns();
  ASSERT_TRUE(start(s, now));
  uint8_t pkt[1500];
  ASSERT_GT(s.produce(pkt, sizeof pkt, now), 0);
  // Fire the timers as the loop would, with no answer ever coming, until
  // the session gives up (its idle timeout, 30 s, at the latest).
  bool alive = true;
  for (int i = 0; i < 1000 && alive; ++i) {
    now = std::max(now, s.expiry());
    alive = s.handle_expiry(now);
    while (alive && s.produce(pkt, sizeof pkt, now) > 0) {
    }
  }
  ASSERT_FALSE(alive);
  EXPECT_EQ(s.error_kind(), ErrorKind::tls);
  EXPECT_NE(std::string(s.error()).find("handshake timed out"), std::string::npos) << s.error();
  EXPECT_TRUE(sink_.failures.empty());  // no request was in flight
}

TEST_F(H3SessionTest, ClosedReportsNothingWhenNothingWasInFlight) {
  H3Session s(*templates_, 4, false, false, kNoSave, sink_);
  ASSERT_TRUE(start(s, now_ns()));
  s.closed(ErrorKind::reset, "gone");
  EXPECT_TRUE(sink_.failures.empty());
  EXPECT_TRUE(sink_.statuses.empty());
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(s.capacity(), 0u);
  // It starts again after a close, as a reconnect does.
  ASSERT_TRUE(start(s, now_ns()));
  EXPECT_FALSE(s.finished());
  s.discard();
  EXPECT_TRUE(sink_.failures.empty());
}

}  // namespace
}  // namespace torii::load
