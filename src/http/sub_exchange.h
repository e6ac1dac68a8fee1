// An exchange the server makes for itself on behalf of a client's request
// (a cache refresh, a slice part, a mirror): it runs the client's location, with its
// captures and variables, past the access phases the client passed.
#pragma once

#include "http/exchange.h"

namespace torii::http {

void take_route_of(Exchange& sub, const Exchange& client);

// `to` becomes a copy of `from` whose views point into `bytes` (sized
// once, so they stay put): for an exchange that may outlive the client's,
// whose head refers to its connection's buffer.
void copy_head(const RequestHead& from, RequestHead& to, std::string& bytes);

}  // namespace torii::http
