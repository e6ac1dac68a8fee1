#include "handlers/fastcgi/split_path.h"

#include "config/cgi_config.h"
#include "config/config.h"
#include "config/regex.h"
#include "http/exchange.h"

namespace torii::handlers::fastcgi {

namespace {

struct Split {
  std::string script_name;
  std::string path_info;
};

Split split(const http::Exchange& ex) {
  const auto& cfg = ex.settings().fastcgi;
  Split out;
  config::Captures caps;
  if (cfg && cfg->split_path_info && cfg->split_path_info->match(ex.req.path, &caps)) {
    out.script_name = caps.get(1);
    out.path_info = caps.get(2);
    return out;
  }
  out.script_name = ex.req.path;
  return out;
}

}  // namespace

void append_script_name(const http::Exchange& ex, std::string& out) {
  Split s = split(ex);
  out.append(s.script_name);
  const auto& cfg = ex.settings().fastcgi;
  if (cfg && !s.script_name.empty() && s.script_name.back() == '/') out.append(cfg->index);
}

void append_path_info(const http::Exchange& ex, std::string& out) { out.append(split(ex).path_info); }

}  // namespace torii::handlers::fastcgi
