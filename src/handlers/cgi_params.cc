#include "handlers/cgi_params.h"

#include <algorithm>
#include <string>

#include "config/cache_config.h"
#include "core/ascii.h"
#include "http/exchange.h"
#include "http/variables.h"

namespace torii::handlers {

namespace {

bool cache_keeps(const http::Header& h) {
  using T = http::HeaderToken;
  return h.token == T::if_modified_since || h.token == T::if_none_match || h.token == T::if_range ||
         h.token == T::if_match || h.token == T::range || core::iequals(h.name, "if-unmodified-since");
}

}  // namespace

void build_cgi_params(const http::Exchange& ex, const config::CgiConfig& cfg, CgiParamSink& sink) {
  std::string value;
  for (const auto& p : cfg.params) {
    // An HTTP_ param written as "" only hides that request header (the
    // httpoxy guard `fastcgi_param HTTP_PROXY ""`): nginx sends no such
    // param at all, so the application sees none rather than an empty one.
    if (p.value.source.empty() && p.name.size() > 5 && p.name.compare(0, 5, "HTTP_") == 0) continue;
    value.clear();
    http::render(p.value, ex, value);
    if (p.if_not_empty && value.empty()) continue;
    sink.add(p.name, value);
  }
  if (!cfg.upstream.pass_request_headers) return;
  // A cache wants the whole response: the client's conditionals and range
  // stay here (nginx's *_cache adds them to the params, empty).
  const bool caching = cfg.upstream.cache && cfg.upstream.cache->enabled();
  std::string name;
  for (const auto& h : ex.req.headers) {
    if (caching && cache_keeps(h)) continue;
    name.assign("HTTP_");
    for (char c : h.name) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      else if (c == '-') c = '_';
      name.push_back(c);
    }
    // A param of the same name wins (fastcgi_param HTTP_PROXY "" is the
    // usual guard against the httpoxy header).
    if (std::any_of(cfg.params.begin(), cfg.params.end(), [&](const config::CgiParam& p) { return p.name == name; }))
      continue;
    sink.add(name, h.value);
  }
}

}  // namespace torii::handlers
