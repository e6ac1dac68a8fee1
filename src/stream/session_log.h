// A stream session's error-log line in nginx's shape: the message, the
// errno, " while ACTION", then ", [udp ]client: ..., server: ..." and,
// once an upstream was chosen, its address and the byte counts. Written
// to the server's own error_log when it has one, else the process's.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "config/config.h"
#include "stream/stream_config.h"

namespace torii::stream {

struct ErrorContext {
  const Settings* settings = nullptr;
  uint64_t connection = 0;
  const sockaddr_storage* peer = nullptr;
  const std::string* server = nullptr;  // the listen address's text; null: no context (nginx's summary lines)
  bool udp = false;
  const std::string* upstream = nullptr;  // null: none chosen yet
  uint64_t from_client = 0, to_client = 0, from_upstream = 0, to_upstream = 0;
};

// A line with no client context (nginx's summary lines: "udp done", ...).
void log_session_summary(const Settings& s, uint64_t connection, config::LogLevel level, const std::string& message);

void log_session_error(const ErrorContext& c, config::LogLevel level, const std::string& message, int err,
                       const char* action);

}  // namespace torii::stream
