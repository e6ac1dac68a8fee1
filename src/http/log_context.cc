#include "http/log_context.h"

#include "http/exchange.h"

namespace torii::http {

namespace {
std::string_view protocol(int version) {
  switch (version) {
    case 10: return "HTTP/1.0";
    case 20: return "HTTP/2.0";
    case 30: return "HTTP/3.0";
    default: return "HTTP/1.1";
  }
}
}  // namespace

std::string log_context(const Exchange& ex, std::string_view upstream) {
  std::string out;
  out.reserve(128);
  out.append(", client: ").append(ex.conn().remote_addr);
  if (ex.server && !ex.server->names.empty() && !ex.server->names[0].name.empty()) {
    out.append(", server: ").append(ex.server->names[0].name);
  }
  if (!ex.req.method_name.empty()) {
    out.append(", request: \"").append(ex.req.method_name).append(" ").append(ex.req.target);
    if (ex.req.version != 9) out.append(" ").append(protocol(ex.req.version));  // HTTP/0.9 names none
    out.append("\"");
  }
  if (!upstream.empty()) out.append(", upstream: \"").append(upstream).append("\"");
  if (const Header* h = ex.req.find(HeaderToken::host)) out.append(", host: \"").append(h->value).append("\"");
  return out;
}

}  // namespace torii::http

namespace torii::http {

const config::ErrorLogConfig* request_error_log(const Exchange& ex) {
  if (!ex.location && !ex.server) return nullptr;
  const auto& own = ex.settings().error_log;
  return own && (!own->syslog || own->also) ? &*own : nullptr;  // a syslog target alone: the main log
}

}  // namespace torii::http
