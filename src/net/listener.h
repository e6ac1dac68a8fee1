// Listening TCP sockets. Every worker opens its own socket per address with
// SO_REUSEPORT, so the kernel spreads new connections and no accept lock is
// needed.
#pragma once

#include "config/config.h"
#include "core/result.h"

namespace torii::net {

// A bound, listening, non-blocking socket for `listen`.
Result<int> open_listener(const config::Listen& listen);
// deferred, fastopen=, rcvbuf=, sndbuf=, so_keepalive= as socket options.
void apply_listen_options(int fd, const config::Listen& listen);

// Binds the address once without SO_REUSEPORT and closes it: fails if
// another process (which may have set SO_REUSEPORT) already holds it, which
// reuseport alone would silently share.
Status probe_address_free(const config::Listen& listen);

}  // namespace torii::net
