#include "http/sub_exchange.h"

#include "http/variables.h"

namespace torii::http {

void take_route_of(Exchange& sub, const Exchange& client) {
  sub.config = client.config;  // keeps the server and location below alive
  sub.server = client.server;
  sub.location = client.location;
  sub.captures = client.captures;
  sub.variables = client.variables;
  share_request_id(sub, client);
  sub.is_internal = client.is_internal;
  sub.location_uri_rewritten = client.location_uri_rewritten;
  sub.start_unix_ms = client.start_unix_ms;
  sub.access.subrequest = true;  // the client's request passed the access phases
}

void copy_head(const RequestHead& from, RequestHead& to, std::string& bytes) {
  size_t total = from.method_name.size() + from.target.size() + from.raw_path.size() + from.query.size();
  for (const auto& h : from.headers) total += h.name.size() + h.value.size();
  bytes.clear();
  bytes.reserve(total);
  auto keep = [&bytes](std::string_view v) {
    const size_t at = bytes.size();
    bytes.append(v);
    return std::string_view(bytes.data() + at, v.size());
  };
  to = from;
  to.method_name = keep(from.method_name);
  to.target = keep(from.target);
  to.raw_path = keep(from.raw_path);
  to.query = keep(from.query);
  for (auto& h : to.headers) {
    h.name = keep(h.name);
    h.value = keep(h.value);
  }
}

}  // namespace torii::http
