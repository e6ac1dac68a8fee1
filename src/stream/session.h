// One stream connection in nginx's phase order: access rules and `set`,
// the TLS handshake (`listen ... ssl`), ssl_preread, then `return` or the
// TCP proxy (pick a server, connect under proxy_connect_timeout, TLS to it
// with proxy_ssl, try the next on failure, then splice bytes both ways
// until both ends are done or proxy_timeout passes with nothing moving),
// and its access log line.
#pragma once

#include <sys/socket.h>

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/event_loop.h"
#include "stream/endpoint.h"
#include "stream/limit_conn/limit_conn.h"
#include "stream/pipe.h"
#include "stream/session_base.h"
#include "stream/session_rates.h"
#include "stream/stream_config.h"
#include "stream/upstream_tries.h"
#include "stream/variables.h"


namespace torii::stream {

class StreamWorker;
class TlsServerEndpoint;

class Session : private SessionBase {
 public:
  Session(StreamWorker& w, int fd, std::shared_ptr<const config::Config> config, const ListenGroup& group,
          const sockaddr_storage& peer);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start();

 private:
  enum class State : uint8_t {
    reading_header,
    handshaking,  // listen ... ssl
    prereading,   // ssl_preread
    returning,
    connecting,
    upstream_handshaking,  // proxy_ssl
    proxying,
    done
  };

  // Each socket's events reach the session through its own handler.
  struct Side final : core::IoHandler {
    Session* session = nullptr;
    bool upstream = false;
    void on_io(uint32_t events) override { session->on_io(upstream, events); }
  };

  void on_io(bool upstream, uint32_t events);
  static void on_timer(void* self);
  static void on_rested(void* self);

  void read_proxy_header();
  void take_real_address();  // set_real_ip_from
  void begin();  // after the PROXY header, if any: access, set, TLS, preread, the handler
  void start_handshake();
  void drive_handshake();
  void after_handshake();
  void start_preread();
  void read_preread();
  void run_handler();
  void start_return();
  void write_return();
  void start_proxy();
  void proxy_to(std::shared_ptr<const Upstream> upstream);
  void connect_next();
  void connected();
  void start_upstream_tls();
  void drive_upstream_handshake();
  void start_proxying();
  // The name proxy_ssl_verify checks and proxy_ssl_server_name sends.
  std::string upstream_tls_name();
  void try_failed(const std::string& what, int err, const char* action = "connecting to upstream");
  void pump();
  bool should_finish() const;
  void finish(int status);
  void close_upstream();
  void record_try_bytes();

  // nginx's error-log context: " while ACTION, client: ..., server: ...".
  void log_error(config::LogLevel level, const std::string& message, int err, const char* action);

  State state_ = State::returning;
  int client_fd_;
  int upstream_fd_ = -1;
  std::unique_ptr<Endpoint> client_io_;  // plain, or TLS once start_handshake made it
  TlsServerEndpoint* client_tls_ = nullptr;  // client_io_ when it is TLS
  std::unique_ptr<Endpoint> upstream_io_;  // set once connected (and its TLS handshake done)
  std::unique_ptr<net::TlsClient> upstream_tls_;  // proxy_ssl: during the handshake
  std::string preread_;  // ssl_preread: what the client sent first, passed on before the rest
  Side client_side_;
  Side upstream_side_;
  core::Timer timer_;  // connect timeout, then proxy_timeout between reads and writes

  // return
  std::string reply_;
  size_t reply_sent_ = 0;

  // proxy
  UpstreamTries tries_;
  int64_t try_start_ms_ = 0;
  std::unique_ptr<Pipe> to_upstream_;
  std::unique_ptr<Pipe> to_client_;
  uint64_t upstream_sent_base_ = 0;  // pipe totals when the current try began
  uint64_t upload_rate_ = 0, download_rate_ = 0;  // rendered when proxying starts
  SessionRates rates_;
};

}  // namespace torii::stream
