#include "http/document_root.h"

#include "config/config.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "log/error_log.h"

namespace torii::http {

namespace {

// True if a "." or ".." segment starts at or after the segment holding
// position `from`. The URI is already normalised, so only the seam between
// alias and URI (location "/i" + alias "/data/" turns "/i../x" into
// "/data/../x") or a variable's value can bring one in.
bool has_dot_segment(std::string_view p, size_t from) {
  size_t seg = from == 0 ? 0 : p.rfind('/', from - 1);
  seg = seg == std::string_view::npos ? 0 : seg + 1;
  while (seg <= p.size()) {
    size_t end = p.find('/', seg);
    if (end == std::string_view::npos) end = p.size();
    const std::string_view s = p.substr(seg, end - seg);
    if (s == "." || s == "..") return true;
    seg = end + 1;
  }
  return false;
}

// A rendered path that is relative is taken from the prefix, as nginx does.
void append_rendered_path(const config::Template& t, const Exchange& ex, std::string& out) {
  const size_t mark = out.size();
  render(t, ex, out);
  if (out.size() > mark && out[mark] != '/' && ex.config) out.insert(mark, ex.config->prefix);
}

}  // namespace

void append_document_root(const Exchange& ex, std::string& out) {
  const config::LocationSettings& s = ex.settings();
  if (!s.alias_template.empty()) return append_rendered_path(s.alias_template, ex, out);
  if (!s.alias.empty()) {
    out.append(s.alias);
    return;
  }
  if (!s.root_template.empty()) return append_rendered_path(s.root_template, ex, out);
  out.append(s.root);
}

bool map_uri_to_path(const Exchange& ex, std::string_view uri, std::string& out) {
  const config::LocationSettings& s = ex.settings();
  if (uri.empty() || uri[0] != '/' || uri.find('\0') != std::string_view::npos) return false;
  if (s.alias.empty()) {
    if (!s.root_template.empty()) {
      out.clear();
      append_rendered_path(s.root_template, ex, out);
      if (!out.empty() && out.back() == '/') out.pop_back();
      const size_t root_len = out.size();
      out.append(uri);
      return out.find('\0') == std::string::npos && !has_dot_segment(std::string_view(out).substr(0, root_len), 0);
    }
    out.reserve(s.root.size() + uri.size());
    out.assign(s.root);
    out.append(uri);
    return true;
  }
  // An alias with variables is rendered first; either way a regex
  // location's alias names the whole file, a prefix location's takes the
  // place of the prefix (nginx's ngx_http_map_uri_to_path).
  std::string rendered;
  if (!s.alias_template.empty()) append_rendered_path(s.alias_template, ex, rendered);
  const std::string& alias = s.alias_template.empty() ? s.alias : rendered;
  const bool checked = s.alias_template.empty();  // written by the admin, not by the request
  const config::Location* loc = ex.location;
  if (s.alias_names_file || !loc) {
    out.assign(alias);
    if (loc && ex.uri_added_to_alias == loc) out.append(uri);
    if (!checked && (out.find('\0') != std::string::npos || has_dot_segment(std::string_view(out).substr(0, alias.size()), 0)))
      return false;
    return !has_dot_segment(out, alias.size());
  }
  // The prefix of the location that set the alias: this one's, or (in a
  // nested location that inherits it) its parent's, as nginx.
  const std::string& prefix = s.alias_prefix;
  if (uri.substr(0, prefix.size()) != prefix) {
    // Only reachable through try_files naming a URI outside the location.
    TORII_LOG_EX(ex, error, "\"%.*s\" is outside alias location \"%s\"%s", static_cast<int>(uri.size()), uri.data(),
              prefix.c_str(), log_context(ex).c_str());
    return false;
  }
  out.reserve(alias.size() + uri.size());
  out.assign(alias);
  out.append(uri.substr(prefix.size()));
  if (!checked && (out.find('\0') != std::string::npos || has_dot_segment(std::string_view(out).substr(0, alias.size()), 0)))
    return false;
  return !has_dot_segment(out, alias.size());
}

bool in_regex_alias_location(const Exchange& ex) {
  const config::LocationSettings& s = ex.settings();
  return ex.location && !s.alias.empty() && s.alias_names_file;
}

bool map_try_files_entry(Exchange& ex, std::string_view entry, std::string& out) {
  if (!in_regex_alias_location(ex)) return map_uri_to_path(ex, entry, out);
  const config::Location* before = ex.uri_added_to_alias;
  ex.uri_added_to_alias = ex.location;
  const bool ok = map_uri_to_path(ex, entry, out);
  ex.uri_added_to_alias = before;
  return ok;
}

}  // namespace torii::http
