// A connection accepted on a `listen ... proxy_protocol` address, before
// its PROXY header has arrived. It owns the socket until the header is
// complete (peeked, then taken off the socket exactly, so TLS or HTTP/1
// start on the connection's own first byte), within
// client_header_timeout. A bad or missing header closes the connection
// with nginx's log line.
#pragma once

#include <sys/socket.h>

#include <memory>

#include "core/event_loop.h"
#include "core/timer_wheel.h"
#include "core/worker.h"

namespace torii::core {

class ProxyProtocolReader final : public IoHandler {
 public:
  ProxyProtocolReader(Worker& worker, int fd, std::shared_ptr<ListenBinding> binding, const sockaddr_storage& peer);
  ~ProxyProtocolReader() override;
  ProxyProtocolReader(const ProxyProtocolReader&) = delete;
  ProxyProtocolReader& operator=(const ProxyProtocolReader&) = delete;

  void start();
  void on_io(uint32_t events) override;
  // Graceful stop or the address left the config: nothing was served yet.
  void abandon() { close_socket(); }

 private:
  static void on_timer(void* self);
  void read();
  void close_socket();
  void finish();  // the reader is done: the worker destroys it at the end of the turn

  Worker& worker_;
  int fd_;
  std::shared_ptr<ListenBinding> binding_;
  sockaddr_storage peer_;
  Timer timer_;
  bool done_ = false;
  bool peer_closed_ = false;  // EPOLLRDHUP: no more bytes will come
};

}  // namespace torii::core
