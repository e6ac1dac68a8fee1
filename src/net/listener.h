// Listening TCP sockets. Every worker opens its own socket per address with
// SO_REUSEPORT, so the kernel spreads new connections and no accept lock is
// needed; a unix path's one socket is shared instead (net/unix_listeners).
#pragma once

#include "config/config.h"
#include "core/result.h"

namespace torii::net {

// A bound, listening, non-blocking socket for `listen` (for a unix path,
// this worker's dup of the process's one socket: net/unix_listeners).
Result<int> open_listener(const config::Listen& listen);
// What a worker's epoll waits for on the socket: on a unix path, which every
// worker shares, EPOLLEXCLUSIVE, so a new connection wakes one worker and
// not all of them. Such a registration cannot be modified, only removed.
uint32_t accept_events(const config::Listen& listen);
// deferred, fastopen=, rcvbuf=, sndbuf=, so_keepalive= as socket options.
void apply_listen_options(int fd, const config::Listen& listen);

// Binds the address once without SO_REUSEPORT and closes it: fails if
// another process (which may have set SO_REUSEPORT) already holds it, which
// reuseport alone would silently share. A unix path is opened for good
// (its socket is the process's from then on).
Status probe_address_free(const config::Listen& listen);

}  // namespace torii::net
