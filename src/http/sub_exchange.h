// An exchange the server makes for itself on behalf of a client's request
// (a cache refresh, a slice part): it runs the client's location, with its
// captures and variables, past the access phases the client passed.
#pragma once

#include "http/exchange.h"

namespace torii::http {

void take_route_of(Exchange& sub, const Exchange& client);

}  // namespace torii::http
