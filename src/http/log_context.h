// The tail nginx puts on error-log lines about a request:
// ", client: 127.0.0.1, server: example.com, request: "GET / HTTP/1.1", host: "example.com"".
#pragma once

#include <string>

namespace torii::http {

class Exchange;

std::string log_context(const Exchange& ex);

}  // namespace torii::http
