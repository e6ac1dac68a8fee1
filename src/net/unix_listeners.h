// `listen unix:PATH`: a path can be bound only once (SO_REUSEPORT is for
// TCP and UDP), so the process holds one listening socket per path and
// every worker, http or stream, accepts on its own dup of it. The file is
// made readable and writable by all (as nginx does), a stale one left by a
// process that died is replaced, and the file is removed when the path
// leaves the config or the process exits.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "core/result.h"

namespace torii::net::unix_listeners {

// A new descriptor for the path's socket, opened (bound, chmod 0666,
// listening) on first use; the caller owns and closes it.
Result<int> open(const config::Listen& listen);

// After a reload: closes and removes the paths not in `kept` ("unix:PATH"
// texts). Workers still holding a dup keep it until they let it go.
void keep_only(const std::vector<std::string>& kept);

// At exit: closes and removes every path.
void close_all();

}  // namespace torii::net::unix_listeners
