// One active health probe of one upstream server: a non-blocking connect,
// a GET of the check's URI, and the status line of the answer. The caller
// polls fd() for events() and calls on_ready() until the probe is done;
// nothing here blocks or keeps time (the caller applies the timeout).
#pragma once

#include <sys/socket.h>

#include <string>

#include "config/health_check_config.h"
#include "config/upstream_config.h"

namespace torii::upstream {

class HealthProbe {
 public:
  enum class State { connecting, sending, reading, passed, failed };

  HealthProbe(const config::UpstreamServer& server, const config::HealthCheckConfig& check);
  ~HealthProbe();
  HealthProbe(const HealthProbe&) = delete;
  HealthProbe& operator=(const HealthProbe&) = delete;

  int fd() const { return fd_; }
  short events() const;  // POLLOUT while connecting or sending, else POLLIN
  State state() const { return state_; }
  bool done() const { return state_ == State::passed || state_ == State::failed; }
  // Why it failed, as the error log says it ("connect() failed (111: ...)").
  const std::string& reason() const { return reason_; }
  int status() const { return status_; }

  void on_ready();
  void time_out();

 private:
  void fail(std::string why, int err = 0);
  void send_request();
  void read_status();

  const config::HealthCheckConfig& check_;
  int fd_ = -1;
  State state_ = State::connecting;
  std::string out_;
  size_t sent_ = 0;
  std::string in_;
  int status_ = 0;
  std::string reason_;
};

}  // namespace torii::upstream
