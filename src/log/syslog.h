// syslog targets for access_log and error_log ("syslog:server=ADDR,..."),
// sent as nginx sends them: one datagram per line, RFC 3164 framing
// "<PRI>Mmm dd hh:mm:ss HOST TAG: MESSAGE" (HOST left out with nohostname),
// over UDP (port 514 by default) or a unix datagram socket.
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>

#include "core/result.h"

namespace torii::log {

struct SyslogTarget {
  std::string server;  // as written, for messages
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  int facility = 23;  // local7
  int severity = 6;   // info
  std::string tag = "torii";
  bool nohostname = false;
};

// Parses what follows "syslog:" (nginx's parameters and error messages).
Result<SyslogTarget> parse_syslog_target(std::string_view params);

// The frame's head: "<PRI>Mmm dd hh:mm:ss HOST TAG: ".
void append_syslog_header(std::string& out, const SyslogTarget& t, int severity);

// A connected, non-blocking datagram socket to one target, opened at the
// first send and again after a failed one. One per thread that logs.
class SyslogSender {
 public:
  explicit SyslogSender(const SyslogTarget& t) : target_(t) {}
  ~SyslogSender();
  SyslogSender(const SyslogSender&) = delete;
  SyslogSender& operator=(const SyslogSender&) = delete;

  // Sends one framed message; false when it could not (the caller may
  // report it, once). A full socket buffer drops the line, as nginx does.
  bool send(std::string_view frame);
  const SyslogTarget& target() const { return target_; }

 private:
  SyslogTarget target_;
  int fd_ = -1;
};

}  // namespace torii::log
