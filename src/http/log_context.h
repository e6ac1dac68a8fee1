// The tail nginx puts on error-log lines about a request:
// ", client: 127.0.0.1, server: example.com, request: "GET / HTTP/1.1", host: "example.com:8080"".
// The host is the Host field as the client sent it (with its port); a
// proxy's line names its upstream before it.
#pragma once

#include <string>
#include <string_view>

#include "log/error_log.h"

namespace torii::http {

class Exchange;

std::string log_context(const Exchange& ex, std::string_view upstream = {});

// The error_log of the request's location (or server, or http block), if
// the config gives it one; null: the main log.
const config::ErrorLogConfig* request_error_log(const Exchange& ex);

}  // namespace torii::http

// A line about a request: written to its location's error_log at that
// log's level (nginx's r->connection->log), else to the main log.
#define TORII_LOG_EX(ex, level, ...)                                                \
  do {                                                                              \
    const ::torii::config::ErrorLogConfig* own_log_ = ::torii::http::request_error_log(ex); \
    if (::torii::log::enabled_for(own_log_, ::torii::config::LogLevel::level))      \
      ::torii::log::write_for(own_log_, ::torii::config::LogLevel::level, __VA_ARGS__); \
  } while (0)
