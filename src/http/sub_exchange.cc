#include "http/sub_exchange.h"

namespace torii::http {

void take_route_of(Exchange& sub, const Exchange& client) {
  sub.config = client.config;  // keeps the server and location below alive
  sub.server = client.server;
  sub.location = client.location;
  sub.captures = client.captures;
  sub.variables = client.variables;
  sub.is_internal = client.is_internal;
  sub.location_uri_rewritten = client.location_uri_rewritten;
  sub.start_unix_ms = client.start_unix_ms;
  sub.access.subrequest = true;  // the client's request passed the access phases
}

}  // namespace torii::http
