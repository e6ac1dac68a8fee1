#include "upstream/health_probe.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>

namespace torii::upstream {

namespace {
constexpr size_t kMaxStatusLine = 1024;
}

HealthProbe::HealthProbe(const config::UpstreamServer& server, const config::HealthCheckConfig& check)
    : check_(check) {
  // HTTP/1.0 with Connection: close: the answer ends with the connection,
  // and no server keeps a probe's connection open waiting for more.
  std::string host = server.addr.ss_family == AF_UNIX ? "localhost" : server.name;
  out_ = "GET " + check.uri + " HTTP/1.0\r\nHost: " + host +
         "\r\nUser-Agent: torii-health-check\r\nConnection: close\r\n\r\n";
  fd_ = ::socket(server.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    fail("socket() failed", errno);
    return;
  }
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&server.addr), server.addr_len) == 0) {
    state_ = State::sending;
    send_request();
  } else if (errno != EINPROGRESS) {
    fail("connect() failed", errno);
  }
}

HealthProbe::~HealthProbe() {
  if (fd_ >= 0) ::close(fd_);
}

short HealthProbe::events() const {
  return state_ == State::connecting || state_ == State::sending ? POLLOUT : POLLIN;
}

void HealthProbe::fail(std::string why, int err) {
  if (err) why += " (" + std::to_string(err) + ": " + std::strerror(err) + ")";
  reason_ = std::move(why);
  state_ = State::failed;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void HealthProbe::time_out() {
  if (!done()) fail(state_ == State::connecting ? "connect() timed out" : "timed out");
}

void HealthProbe::on_ready() {
  switch (state_) {
    case State::connecting: {
      int err = 0;
      socklen_t len = sizeof err;
      if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err) {
        fail("connect() failed", err);
        return;
      }
      state_ = State::sending;
      send_request();
      return;
    }
    case State::sending:
      send_request();
      return;
    case State::reading:
      read_status();
      return;
    default:
      return;
  }
}

void HealthProbe::send_request() {
  while (sent_ < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
    if (n > 0) {
      sent_ += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // wait for POLLOUT
    fail("send() failed", n < 0 ? errno : EIO);
    return;
  }
  state_ = State::reading;
}

// "HTTP/1.x NNN ..." is all a probe needs; the rest is not read.
void HealthProbe::read_status() {
  char buf[512];
  while (true) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0) {
      fail("recv() failed", errno);
      return;
    }
    if (n == 0) {
      fail(in_.empty() ? "upstream prematurely closed connection" : "upstream sent an invalid status line");
      return;
    }
    in_.append(buf, size_t(n));
    if (in_.find('\n') != std::string::npos || in_.size() >= kMaxStatusLine) break;
  }
  // "HTTP/1.1 200" is twelve bytes; the version's minor digit may vary.
  bool ok = in_.size() >= 12 && in_.compare(0, 7, "HTTP/1.") == 0 && in_[8] == ' ';
  int status = 0;
  for (size_t i = 9; ok && i < 12; ++i) {
    if (in_[i] < '0' || in_[i] > '9') ok = false;
    status = status * 10 + (in_[i] - '0');
  }
  if (!ok || (in_.size() > 12 && in_[12] != ' ' && in_[12] != '\r' && in_[12] != '\n')) {
    fail("upstream sent an invalid status line");
    return;
  }
  status_ = status;
  if (status < check_.status_min || status > check_.status_max) {
    fail("status " + std::to_string(status) + " does not match");
    return;
  }
  state_ = State::passed;
  ::close(fd_);
  fd_ = -1;
}

}  // namespace torii::upstream
