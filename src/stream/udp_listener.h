// A `listen ... udp` socket of one worker: it reads the datagrams that
// arrive and hands each to the session of its client's address and port,
// making one for a client it has none for. The sessions answer through
// its socket. Closing it ends them (nginx ends UDP sessions when their
// listening socket goes on reload or at a graceful stop).
#pragma once

#include <sys/socket.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "config/config.h"
#include "core/event_loop.h"
#include "stream/stream_config.h"

namespace torii::stream {

class StreamWorker;
class UdpSession;

class UdpListener final : public core::IoHandler {
 public:
  UdpListener(StreamWorker& w, int fd, std::shared_ptr<const config::Config> config, const ListenGroup* group);
  ~UdpListener() override;
  UdpListener(const UdpListener&) = delete;
  UdpListener& operator=(const UdpListener&) = delete;

  bool watch();
  void rebind(std::shared_ptr<const config::Config> config, const ListenGroup* group);
  void close_listener();

  int fd() const { return fd_; }
  // A wildcard address: replies name their source (net/packet_info).
  bool wildcard() const { return wildcard_; }
  // The session stops taking this client's datagrams: its next one starts
  // a new session (proxy_requests reached, or the session ended).
  void forget(const UdpSession* s, const sockaddr_storage& peer, const sockaddr_storage& local);
  // The session ended: it no longer answers through this socket.
  void leave(UdpSession* s, const sockaddr_storage& peer, const sockaddr_storage& local);
  // The socket refused the session's datagram (EAGAIN): once it is
  // writable, the session's client_writable() runs.
  void wait_writable(UdpSession* s);

  void on_io(uint32_t events) override;

 private:
  // The client's address and port, and on a wildcard listen the address
  // it wrote to (nginx keeps a session per both).
  std::string key(const sockaddr_storage& peer, const sockaddr_storage& local) const;

  StreamWorker& w_;
  int fd_;
  std::shared_ptr<const config::Config> config_;
  const ListenGroup* group_;
  sockaddr_storage local_{};
  bool wildcard_ = false;
  std::unordered_map<std::string, UdpSession*> routes_;  // by the client's address and port
  std::unordered_set<UdpSession*> members_;  // every live session that answers through this socket
  std::unordered_set<UdpSession*> writers_;  // sessions waiting for the socket to be writable
};

}  // namespace torii::stream
