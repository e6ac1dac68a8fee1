#include "core/proxy_protocol_reader.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "log/error_log.h"
#include "net/address.h"
#include "net/proxy_protocol.h"

namespace torii::core {

ProxyProtocolReader::ProxyProtocolReader(Worker& worker, int fd, std::shared_ptr<ListenBinding> binding,
                                         const sockaddr_storage& peer)
    : worker_(worker), fd_(fd), binding_(std::move(binding)), peer_(peer), timer_(&ProxyProtocolReader::on_timer, this) {}

ProxyProtocolReader::~ProxyProtocolReader() {
  worker_.loop().cancel(timer_);
  if (fd_ >= 0) {
    worker_.loop().remove(fd_);
    ::close(fd_);
  }
}

void ProxyProtocolReader::start() {
  worker_.loop().add(fd_, this, EPOLLIN | EPOLLRDHUP);
  worker_.loop().arm(timer_, binding_->group->default_server->client_header_timeout.count());
  read();
}

void ProxyProtocolReader::on_io(uint32_t events) {
  if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) peer_closed_ = true;
  read();
}

void ProxyProtocolReader::on_timer(void* self) {
  auto* r = static_cast<ProxyProtocolReader*>(self);
  TORII_LOG(info, "client timed out (110: Connection timed out) while reading PROXY protocol, client: %s, server: %s",
            net::address_text(r->peer_).c_str(), r->binding_->group->listen.text.c_str());
  r->close_socket();
}

void ProxyProtocolReader::close_socket() {
  if (fd_ >= 0) {
    worker_.loop().remove(fd_);
    ::close(fd_);
    fd_ = -1;
  }
  finish();
}

void ProxyProtocolReader::finish() {
  if (done_) return;
  done_ = true;
  worker_.loop().cancel(timer_);
  worker_.release(this);
}

void ProxyProtocolReader::read() {
  if (done_ || fd_ < 0) return;
  // Peek: what follows the header belongs to TLS or HTTP and stays in the
  // socket. Edge-triggered, a header still incomplete waits for new bytes.
  char buf[net::kProxyProtocolMaxHeader];
  ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_PEEK);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return;
    TORII_LOG(info, "recv() failed (%d: %s) while reading PROXY protocol, client: %s, server: %s", errno,
              strerror(errno), net::address_text(peer_).c_str(), binding_->group->listen.text.c_str());
    close_socket();
    return;
  }
  if (n == 0) {
    TORII_LOG(info, "client closed connection while reading PROXY protocol, client: %s, server: %s",
              net::address_text(peer_).c_str(), binding_->group->listen.text.c_str());
    close_socket();
    return;
  }
  std::string_view got(buf, static_cast<size_t>(n));
  auto r = net::parse_proxy_protocol(got);
  if (r.kind == net::ProxyProtocolResult::Kind::need_more) {
    // More bytes may complete it, unless the peer has shut its side.
    if (!peer_closed_) return;
    r.kind = net::ProxyProtocolResult::Kind::error;
    r.error = net::proxy_protocol_broken_header(got);
  }
  if (r.kind == net::ProxyProtocolResult::Kind::error) {
    TORII_LOG(error, "%s while reading PROXY protocol, client: %s, server: %s", r.error.c_str(),
              net::address_text(peer_).c_str(), binding_->group->listen.text.c_str());
    close_socket();
    return;
  }
  ssize_t taken = ::recv(fd_, buf, r.size, 0);
  if (taken != static_cast<ssize_t>(r.size)) {
    close_socket();
    return;
  }
  std::shared_ptr<const net::ProxyProtocolAddrs> addrs;
  if (r.addrs) addrs = std::make_shared<const net::ProxyProtocolAddrs>(std::move(*r.addrs));
  worker_.loop().remove(fd_);
  worker_.loop().cancel(timer_);
  const int fd = fd_;
  fd_ = -1;
  done_ = true;
  worker_.adopt_connection(fd, binding_, peer_, std::move(addrs), this);
}

}  // namespace torii::core
