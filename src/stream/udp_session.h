// One UDP "session" of a `listen ... udp` server, as nginx's stream
// module keeps them: the datagrams of one client address and port on one
// listening socket. Access rules and `set` run on the first datagram;
// then `return` sends one datagram back, or the proxy picks a server of
// the group, relays every client datagram to it over a connected UDP
// socket and every answer back from the listening socket. The session
// ends once proxy_responses answers per request came back, or after
// proxy_timeout without a datagram; with proxy_requests, the client's
// next datagram after that many starts a new session. proxy_upload_rate
// and proxy_download_rate apply as nginx applies them to datagrams: a
// direction that read past its allowance rests; an upstream's datagrams
// wait in its socket meanwhile, a client's are lost (nginx does not read
// the listening socket's datagram for a session that rests). A datagram
// a socket cannot take yet (EAGAIN) waits, in order, up to
// proxy_buffer_size bytes a direction, for the socket to be writable
// (datagram_queue.h); beyond that it is dropped and logged. Bytes are
// relayed, never parsed.
#pragma once

#include <sys/socket.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/event_loop.h"
#include "stream/datagram_queue.h"
#include "stream/session_base.h"
#include "stream/session_rates.h"
#include "stream/stream_config.h"
#include "stream/upstream_tries.h"
#include "stream/variables.h"


namespace torii::stream {

class StreamWorker;
class UdpListener;

class UdpSession : private SessionBase {
 public:
  UdpSession(StreamWorker& w, UdpListener& listener, std::shared_ptr<const config::Config> config,
             const ListenGroup& group, const sockaddr_storage& peer, const sockaddr_storage& local);
  ~UdpSession();
  UdpSession(const UdpSession&) = delete;
  UdpSession& operator=(const UdpSession&) = delete;

  void start(std::string_view first);
  // A later datagram of the same client.
  void from_client(std::string_view datagram);
  // The listening socket closes (reload dropped it, or a graceful stop).
  void listener_gone();
  // The listening socket takes datagrams again: what waited for it goes.
  void client_writable();

 private:
  enum class State : uint8_t { resolving, proxying, done };

  struct UpstreamSide final : core::IoHandler {
    UdpSession* session = nullptr;
    void on_io(uint32_t events) override { session->upstream_io(events); }
  };

  static void on_timer(void* self);
  static void on_rested(void* self);
  void start_proxy();
  void proxy_to(std::shared_ptr<const Upstream> upstream);
  bool connect_next();
  void send_upstream(std::string_view datagram);
  DatagramQueue::Send upstream_sender();
  void sent_upstream(DatagramQueue::Outcome out, size_t size);
  void upstream_io(uint32_t events);
  void read_upstream();
  void send_client(std::string_view datagram);
  DatagramQueue::Send client_sender();
  ssize_t send_client_now(std::string_view datagram);
  void sent_client(DatagramQueue::Outcome out, size_t size);
  std::string dropped_line(size_t size, const DatagramQueue& q) const;
  void after_datagram();
  void arm_timeout();
  void finish(int status);
  void close_upstream();
  void log_error(config::LogLevel level, const std::string& message, int err, const char* action);
  std::string packets_line(const char* what) const;

  UdpListener* listener_;  // null once it closed or no longer routes to us
  State state_ = State::resolving;
  UpstreamSide upstream_side_;
  core::Timer timer_;  // proxy_timeout since the last datagram either way
  SessionRates rates_;  // proxy_upload_rate / proxy_download_rate
  DatagramQueue upstream_out_;  // to the upstream, waiting for its socket (proxy_buffer_size)
  DatagramQueue client_out_;    // to the client, waiting for the listening socket

  std::vector<std::string> waiting_;  // client datagrams while the resolver answers
  UpstreamTries tries_;
  int upstream_fd_ = -1;
  bool upstream_failed_ = false;  // an error or an unanswered timeout: the balancer counts a failure
  bool upstream_eof_ = false;     // a read error: nothing more is read from it
  bool upstream_wants_out_ = false;  // datagrams wait: EPOLLOUT is watched
  uint64_t requests_ = 0, responses_ = 0;
  uint64_t to_upstream_ = 0, from_upstream_ = 0;
};

}  // namespace torii::stream
