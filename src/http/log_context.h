// The tail nginx puts on error-log lines about a request:
// ", client: 127.0.0.1, server: example.com, request: "GET / HTTP/1.1", host: "example.com:8080"".
// The host is the Host field as the client sent it (with its port); a
// proxy's line names its upstream before it.
#pragma once

#include <string>

namespace torii::http {

class Exchange;

#include <string_view>

std::string log_context(const Exchange& ex, std::string_view upstream = {});

}  // namespace torii::http
