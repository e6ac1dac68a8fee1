#include "modules/charset/charset_filter.h"

#include <strings.h>

#include "config/charset_config.h"
#include "config/config.h"
#include "http/exchange.h"
#include "http/variables.h"
#include "http/log_context.h"
#include "http/response.h"
#include "log/error_log.h"
#include "modules/charset/charset_sink.h"

namespace torii::charset {

namespace {

bool listed(std::string_view mime, const std::vector<std::string>& types) {
  if (mime.size() == 9 && strncasecmp(mime.data(), "text/html", 9) == 0) return true;
  for (const auto& t : types) {
    if (t == "*") return true;
    if (t.size() == mime.size() && strncasecmp(t.data(), mime.data(), mime.size()) == 0) return true;
  }
  return false;
}

bool has_charset(std::string_view type) {
  for (size_t i = type.find(';'); i != std::string_view::npos; i = type.find(';', i + 1)) {
    std::string_view rest = type.substr(i + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.size() >= 8 && strncasecmp(rest.data(), "charset=", 8) == 0) return true;
  }
  return false;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// nginx's ngx_http_set_charset: the type then names `charset`, except on
// a 301 or 302 (old browsers took a redirect's charset for the target's).
// A charset the type named is replaced with its other parameters, as
// nginx writes only the MIME type back.
void set_charset(std::string& type, bool had_charset, const std::string& charset, int status) {
  if (had_charset) {
    type.resize(type.find(';'));
    while (!type.empty() && type.back() == ' ') type.pop_back();
  }
  if (status == 301 || status == 302) return;
  type += "; charset=";
  type += charset;
}

// What the filter makes of a response of this Content-Type: nothing
// (`applies` false), or the charset its body is in (`from`: the declared
// one, else source_charset; empty when unknown).
struct Plan {
  bool applies = false;
  std::string declared;
  std::string from;
};

Plan plan_for(const config::LocationSettings& s, std::string_view type) {
  Plan p;
  if (type.empty()) return p;
  p.declared = std::string(charset_param(type));
  if (!p.declared.empty()) {
    if (!s.override_charset) return p;  // the response says what it is
  } else {
    std::string_view mime = type.substr(0, type.find(';'));
    while (!mime.empty() && mime.back() == ' ') mime.remove_suffix(1);
    if (!listed(mime, s.charset_types ? *s.charset_types : default_types())) return p;
  }
  p.applies = true;
  p.from = p.declared.empty() ? s.source_charset : p.declared;
  return p;
}

// The charset_map between two charsets, either way round.
std::shared_ptr<const config::CharsetMap> find_map(const http::Exchange& ex, std::string_view from, std::string_view to,
                                                   Recoder::Direction& direction) {
  direction = Recoder::Direction::forward;
  if (!ex.config) return nullptr;
  for (const auto& m : ex.config->charset_maps) {
    if (same_name(m->from, from) && same_name(m->to, to)) return m;
    if (same_name(m->from, to) && same_name(m->to, from)) {
      direction = Recoder::Direction::backward;
      return m;
    }
  }
  return nullptr;
}

// The response's charset: `charset`'s, rendered when it has variables
// ("off" or empty: none).
std::string target_charset(const http::Exchange& ex) {
  const config::LocationSettings& s = ex.settings();
  if (s.charset_template.empty()) return s.charset;
  std::string name = http::render(s.charset_template, ex);
  if (name == "off") name.clear();
  return name;
}

}  // namespace

std::string_view charset_param(std::string_view type) {
  for (size_t i = type.find(';'); i != std::string_view::npos; i = type.find(';', i + 1)) {
    std::string_view rest = type.substr(i + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.size() < 8 || strncasecmp(rest.data(), "charset=", 8) != 0) continue;
    rest.remove_prefix(8);
    rest = rest.substr(0, rest.find(';'));
    while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
    if (rest.size() >= 2 && rest.front() == '"' && rest.back() == '"') rest = rest.substr(1, rest.size() - 2);
    return rest;
  }
  return {};
}


bool recoding_changes_length(const http::Exchange& ex, std::string_view type) {
  const config::LocationSettings& s = ex.settings();
  const std::string to = target_charset(ex);
  if (to.empty()) return false;
  const Plan p = plan_for(s, type);
  if (!p.applies || p.from.empty() || same_name(p.from, to)) return false;
  Recoder::Direction direction;
  const auto map = find_map(ex, p.from, to, direction);
  return map && map->to_utf8;
}

std::shared_ptr<CharsetSink> header_filter(http::Exchange& ex, http::ResponseHead& head) {
  const config::LocationSettings& s = ex.settings();
  std::string* type = nullptr;
  for (auto& [name, value] : head.headers)
    if (strcasecmp(name.c_str(), "Content-Type") == 0) type = &value;
  if (!type) return nullptr;
  const Plan plan = plan_for(s, *type);
  if (!plan.applies) return nullptr;
  const std::string& declared = plan.declared;
  const std::string to = target_charset(ex);
  if (to.empty()) return nullptr;
  const std::string& from = plan.from;
  if (from.empty() || same_name(from, to)) {  // nothing to recode: only say what it is
    set_charset(*type, !declared.empty(), to, head.status);
    return nullptr;
  }
  // An encoded body's bytes are not text in any charset: left alone.
  if (const std::string* ce = head.find("Content-Encoding"); ce && !ce->empty()) return nullptr;
  Recoder::Direction direction;
  std::shared_ptr<const config::CharsetMap> map = find_map(ex, from, to, direction);
  if (!map) {
    TORII_LOG_EX(ex, error, "no \"charset_map\" between the charsets \"%s\" and \"%s\"%s", from.c_str(), to.c_str(),
              http::log_context(ex).c_str());
    return nullptr;
  }
  set_charset(*type, !declared.empty(), to, head.status);
  if (map->to_utf8) {  // a character may take more or fewer bytes
    head.content_length = -1;
    head.remove("Content-Length");
  }
  if (ex.header_only) return nullptr;
  return make_sink(ex, std::move(map), direction);
}

const std::vector<std::string>& default_types() {
  static const std::vector<std::string> types{"text/html",          "text/xml",
                                              "text/plain",         "text/vnd.wap.wml",
                                              "application/javascript", "application/rss+xml"};
  return types;
}

bool apply_override(std::string_view charset, const std::vector<std::string>& known, int status,
                    http::ResponseHead& head) {
  for (auto& [name, value] : head.headers) {
    if (strcasecmp(name.c_str(), "Content-Type") != 0) continue;
    bool is_known = false;
    for (const auto& k : known)
      is_known = is_known || (k.size() == charset.size() && strncasecmp(k.data(), charset.data(), k.size()) == 0);
    if (!is_known) return false;
    if (has_charset(value) || status == 301 || status == 302) return true;
    value += "; charset=";
    value += charset;
    return true;
  }
  return true;  // no Content-Type: nothing to say a charset of
}

}  // namespace torii::charset
