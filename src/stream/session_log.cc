#include "stream/session_log.h"

#include <cstring>

#include "log/error_log.h"
#include "net/address.h"

namespace torii::stream {

void log_session_summary(const Settings& s, uint64_t connection, config::LogLevel level, const std::string& message) {
  ErrorContext c;
  c.settings = &s;
  c.connection = connection;
  log_session_error(c, level, message, 0, nullptr);
}

void log_session_error(const ErrorContext& c, config::LogLevel level, const std::string& message, int err,
                       const char* action) {
  const Settings& s = *c.settings;
  const bool own_log = s.error_log_fd >= 0;  // error_log of the server or the stream block
  if (own_log ? uint8_t(level) < uint8_t(s.error_log_level) : !log::enabled(level)) return;
  std::string line = message;
  if (err) line += " (" + std::to_string(err) + ": " + std::strerror(err) + ")";
  if (action) line += std::string(" while ") + action;
  if (c.server) {
    line += c.udp ? ", udp client: " : ", client: ";
    line += net::address_text(*c.peer) + ", server: " + *c.server;
  }
  if (c.server && c.upstream) {
    line += ", upstream: \"" + *c.upstream + "\"";
    line += ", bytes from/to client:" + std::to_string(c.from_client) + "/" + std::to_string(c.to_client) +
            ", bytes from/to upstream:" + std::to_string(c.from_upstream) + "/" + std::to_string(c.to_upstream);
  }
  if (own_log) {
    log::write_to(s.error_log_fd, level, "*%llu %s", static_cast<unsigned long long>(c.connection), line.c_str());
  } else {
    log::write(level, "*%llu %s", static_cast<unsigned long long>(c.connection), line.c_str());
  }
}

}  // namespace torii::stream
