// One QUIC connection's I/O shell around an http3::Session: the timer
// (ngtcp2's expiry on the worker's timer wheel), sending what the session
// produced through the endpoint's socket (GSO batches), the closing and
// draining periods, and the graceful stop. Owned by its Endpoint and
// destroyed only at the end of a loop turn.
#pragma once

#include <ngtcp2/ngtcp2.h>

#include <memory>
#include <string>
#include <vector>

#include "core/timer_wheel.h"
#include "http/exchange.h"
#include "http3/session.h"

namespace torii::core {
class Worker;
struct ListenBinding;
}  // namespace torii::core

namespace torii::http3 {

class Endpoint;

class Connection final : public SessionHost {
 public:
  Connection(Endpoint& endpoint, core::Worker& worker, const http::ConnectionInfo& info,
             std::shared_ptr<core::ListenBinding> binding);
  ~Connection() override;

  bool start(const SessionStart& s);
  void on_datagram(const ngtcp2_path& path, const ngtcp2_pkt_info& pi, const uint8_t* data, size_t len);
  // The socket takes writes again: send what waited, then more.
  void on_writable();
  // Graceful stop: GOAWAY, requests in flight finish, then CONNECTION_CLOSE.
  void drain();
  bool closed() const { return state_ == State::closed; }
  const std::vector<ngtcp2_cid>& cids() const { return cids_; }
  // The ID the client's first Initial named, which its retransmissions and
  // 0-RTT packets still carry.
  ngtcp2_cid client_dcid{};
  // Counted among the endpoint's handshakes in progress.
  bool in_handshake = false;

  // SessionHost
  void run_request(http::Exchange& ex) override;
  void log_request(http::Exchange& ex) override;
  void wake() override;
  int64_t now_ms() override;
  http::WorkerServices& services() override;
  void cid_added(const ngtcp2_cid& cid) override;
  void cid_removed(const ngtcp2_cid& cid) override;
  void handshake_completed() override;

 private:
  enum class State : uint8_t { active, closing, draining, closed };

  void drive();
  void schedule_drive();
  bool flush_pending();
  bool send_batch(const ngtcp2_path& path, const uint8_t* data, size_t len, size_t segment);
  void handle(Session::Status st);
  void enter_closing();
  void enter_draining();
  void update_timer();
  static void on_timer(void* self);
  static void on_goaway_timer(void* self);
  void close_now();

  Endpoint& endpoint_;
  core::Worker& worker_;
  std::shared_ptr<core::ListenBinding> binding_;
  Session session_;
  std::vector<ngtcp2_cid> cids_;  // ours, routed to this connection by the endpoint
  State state_ = State::active;
  bool in_drive_ = false;
  bool drive_scheduled_ = false;
  bool draining_requested_ = false;
  bool goaway_final_ = false;  // the GOAWAY with the last request id went out
  // Bytes the socket refused (EAGAIN), sent first when it is writable again.
  std::string pending_;
  size_t pending_segment_ = 0;
  ngtcp2_path_storage pending_path_{};
  core::Timer timer_;
  core::Timer goaway_timer_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace torii::http3
