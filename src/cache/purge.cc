#include "cache/purge.h"

#include <string_view>

#include "cache/entry_file.h"
#include "cache/zone.h"
#include "config/cache_config.h"
#include "core/html_escape.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/access/access_phase.h"

namespace torii::cache {

namespace {

struct Removed {
  size_t count = 0;
  bool prefix = false;
};

Removed remove_entries(http::Exchange& ex, Zone& zone, const std::string& key, bool all_entries) {
  std::string_view k = all_entries ? std::string_view{} : std::string_view(key);
  const bool prefix = all_entries || (!k.empty() && k.back() == '*');
  if (prefix && !all_entries) k.remove_suffix(1);
  const size_t count = zone.purge(k, prefix);
  if (log::enabled(config::LogLevel::info))
    TORII_LOG_EX(ex, info, "cache \"%s\": purged %zu entries for \"%s\"%s", zone.params().name.c_str(), count,
                 all_entries ? "*" : key.c_str(), http::log_context(ex).c_str());
  return {count, prefix};
}

// The module's answer: which key went, from which file (for a prefix, the
// zone's directory).
void send_purged_page(http::Exchange& ex, Zone& zone, const std::string& key, bool prefix) {
  std::string_view sig = !ex.settings().server_tokens ? "torii" : "torii/" TORII_VERSION;
  std::string body =
      "<html>\r\n<head><title>Successful purge</title></head>\r\n<body>\r\n"
      "<center><h1>Successful purge</h1>\r\n<br>Key : ";
  core::append_html_escaped(body, key);
  body += "\r\n<br>Path: ";
  core::append_html_escaped(body, prefix ? zone.params().path : zone.file_path(md5_of(key)));
  body.append("\r\n</center>\r\n<hr><center>").append(sig).append("</center>\r\n</body>\r\n</html>\r\n");
  http::ResponseHead head;
  head.status = 200;
  head.add("Content-Type", "text/html");
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

}  // namespace

void answer_condition_purge(http::Exchange& ex, Zone& zone, const std::string& key) {
  if (remove_entries(ex, zone, key, false).count == 0) {
    http::send_error(ex, 404);
    return;
  }
  http::ResponseHead head;
  head.status = 204;
  ex.send_head(std::move(head));
  ex.finish();
}

MethodPurge method_purge(http::Exchange& ex, const config::PurgeByMethod& p) {
  if (ex.req.method_name != p.method) return MethodPurge::no;
  // The list holds `allow` rules only: an address none of them matches is refused.
  if (!p.from.empty() && access::check_rules(p.from, ex) != access::RuleVerdict::allow) {
    TORII_LOG_EX(ex, error, "purge forbidden: the client is not in the \"from\" list%s",
                 http::log_context(ex).c_str());
    http::send_error(ex, 403);
    return MethodPurge::refused;
  }
  return MethodPurge::yes;
}

void answer_method_purge(http::Exchange& ex, Zone& zone, const std::string& key, bool all_entries) {
  const Removed r = remove_entries(ex, zone, key, all_entries);
  if (r.count == 0) {
    http::send_error(ex, 404);
    return;
  }
  send_purged_page(ex, zone, all_entries ? std::string("*") : key, r.prefix);
}

void serve_purge_location(http::Exchange& ex) {
  const config::CachePurgeLocation& p = *ex.settings().cache_purge_location;
  std::string key;
  http::render(p.key, ex, key);
  answer_method_purge(ex, *p.zone->zone, key, false);
}

}  // namespace torii::cache
