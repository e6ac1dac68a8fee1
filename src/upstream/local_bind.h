// The source address of an upstream connection (*_bind), applied to a new
// socket before connect() the way nginx's ngx_event_connect_peer does:
// IP_TRANSPARENT first when asked (a source address that is not this
// host's; needs CAP_NET_ADMIN), IP_BIND_ADDRESS_NO_PORT when no port is
// given (so the port is picked at connect() and the local ports are shared
// between destinations), then bind().
#pragma once

#include <sys/socket.h>

#include <string>

#include "config/config.h"

namespace torii::upstream {

struct BindFailure {
  config::LogLevel level = config::LogLevel::crit;
  int err = 0;
  std::string what;  // "bind(127.0.0.2) failed", nginx's words
};

// False with `failure` filled: the socket cannot be used (nginx answers 500).
bool bind_local(int fd, const sockaddr_storage& local, socklen_t len, bool transparent, std::string_view name,
                BindFailure& failure);

}  // namespace torii::upstream
