// An HTTP/2 downstream connection: the I/O around a Session. Owns the
// transport (taken over from the HTTP/1 connection that saw the h2c
// preface or negotiated "h2" by ALPN) and one timer, reads until EAGAIN,
// and writes what the session produced with one write per batch. The
// object is destroyed only by its worker at the end of a loop turn.
#pragma once

#include <sys/socket.h>

#include <memory>
#include <string>

#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "core/worker.h"
#include "http/exchange.h"
#include "http2/session.h"
#include "net/transport.h"

namespace torii::http2 {

class Connection final : public core::IoHandler, public SessionHost {
 public:
  // `received`: bytes the HTTP/1 side already read (the client preface first).
  Connection(core::Worker& worker, std::unique_ptr<net::Transport> transport, const http::ConnectionInfo& info,
             std::shared_ptr<core::ListenBinding> binding, std::string received);
  ~Connection() override;

  void start();
  void on_io(uint32_t events) override;
  // Graceful stop (shutdown, or our address left the config): GOAWAY,
  // streams in flight finish, then the connection closes.
  void drain();
  bool on_retired() const { return binding_->retired; }

  // SessionHost
  void run_request(http::Exchange& ex) override;
  void log_request(http::Exchange& ex) override;
  void wake() override;
  int64_t now_ms() override;
  http::WorkerServices& services() override;

 private:
  // quiet: idle, its memory not shed yet (a short first stage of idle, so
  // a connection between two requests of a burst is left as it is).
  enum class TimerKind : uint8_t { none, quiet, idle, send, body };

  void drive();
  void schedule_drive();
  bool read_input();
  bool write_output();
  void start_lingering();
  // `wrote`: bytes left this turn (a full socket drains); `active`: bytes
  // came or went (the connection is not idle).
  void update_timer(bool wrote, bool active);
  static void on_timer(void* self);
  void on_timeout();
  void close_now();

  core::Worker& worker_;
  std::unique_ptr<net::Transport> transport_;
  std::shared_ptr<core::ListenBinding> binding_;
  Session session_;
  std::string received_;  // bytes read before the handover, fed at start
  std::string out_;       // frames the socket did not take yet (empty while it keeps up)
  size_t out_pos_ = 0;
  uint64_t bytes_written_ = 0;
  uint64_t bytes_read_ = 0;
  bool readable_ = true;
  bool peer_closing_ = false;  // EPOLLRDHUP seen: read on to the end of the stream
  bool writable_ = true;
  bool closing_ = false;  // no more input: flush, then close
  bool closed_ = false;
  bool lingering_ = false;  // GOAWAY sent and write side shut: waiting for the client to close
  bool in_drive_ = false;
  bool drive_scheduled_ = false;
  TimerKind timer_kind_ = TimerKind::none;
  int64_t send_timeout_ms_ = 60'000;
  int64_t idle_since_ms_ = 0;  // when the last stream closed (keepalive_timeout counts from there)
  uint64_t requests_at_idle_ = 0;  // a request since then starts the idle time again
  core::Timer timer_;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace torii::http2
