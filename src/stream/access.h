// allow / deny in a stream server: the first rule that matches the
// client's address decides (ngx_stream_access_module); none: allowed.
#pragma once

#include <sys/socket.h>

#include <vector>

#include "config/config.h"

namespace torii::stream {

bool access_allowed(const std::vector<config::AccessRule>& rules, const sockaddr_storage& peer);

}  // namespace torii::stream
