// systemd's notify protocol (sd_notify(3)) without libsystemd: one datagram
// to the unix socket named by $NOTIFY_SOCKET ("@" for an abstract name).
// Without NOTIFY_SOCKET (not started by systemd) every call does nothing.
#pragma once

#include <string_view>

namespace torii::core {

// Listeners are open and workers run.
void notify_ready();
// A reload begins: RELOADING=1 with MONOTONIC_USEC (systemd 253 wants it);
// notify_ready() follows when it ends, whether the new config loaded or not.
void notify_reloading();
void notify_stopping();
// Sends `state` as is ("KEY=VALUE\n..."); false if it could not be sent.
bool notify(std::string_view state);

}  // namespace torii::core
