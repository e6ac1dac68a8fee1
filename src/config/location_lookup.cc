// Location selection, following nginx's ngx_http_core_find_location(): at
// each level the exact or longest prefix match, then (unless it is ^~) that
// location's nested locations, then this level's regexes in file order.
// A path that lacks only the trailing slash of a location that passes
// requests upstream (proxy_pass and the like) selects that location for
// nginx's auto_redirect, unless a location of exactly that path exists.
#include "config/config.h"
#include "config/regex.h"

namespace torii::config {

namespace {

using Locations = std::vector<std::shared_ptr<const Location>>;

enum class Found : uint8_t {
  none,      // nothing at this level
  prefix,    // a prefix matched; regexes of outer levels may still win
  final_,    // an exact match or a regex: stop everywhere
  slash,     // auto_redirect: the path plus "/" names a *_pass location; stop everywhere
};

// nginx's auto_redirect test: `l` is the path with a slash added.
bool names_path_with_slash(const Location& l, std::string_view path) {
  return l.pattern.size() == path.size() + 1 && l.pattern.back() == '/' &&
         std::string_view(l.pattern).substr(0, path.size()) == path;
}

Found find_in(const Locations& locs, std::string_view path, Captures* captures, const Location*& out) {
  const Location* best = nullptr;
  // nginx keeps "= /foo/" and "/foo/" in one tree node: the redirect is on
  // when either asks for it, and then runs under the exact one's settings.
  const Location* slashed = nullptr;
  bool auto_redirect = false;
  for (const auto& l : locs) {
    switch (l->match) {
      case Location::Match::exact:
        if (path == l->pattern) {
          out = l.get();
          return Found::final_;
        }
        if (names_path_with_slash(*l, path)) {
          slashed = l.get();
          auto_redirect = auto_redirect || l->auto_redirect;
        }
        break;
      case Location::Match::prefix:
      case Location::Match::prefix_no_regex:
        if (path.substr(0, l->pattern.size()) == l->pattern &&
            (!best || l->pattern.size() > best->pattern.size()))
          best = l.get();
        if (names_path_with_slash(*l, path)) {
          if (!slashed) slashed = l.get();
          auto_redirect = auto_redirect || l->auto_redirect;
        }
        break;
      default:
        break;
    }
  }
  // A prefix location of exactly this path takes the request instead (in
  // nginx's tree the slashed one hangs below it), and so do its nested
  // locations and the regexes; otherwise nothing else is looked at.
  if (auto_redirect && !(best && best->pattern.size() == path.size())) {
    out = slashed;
    return Found::slash;
  }

  Found rc = Found::none;
  bool noregex = false;
  if (best) {
    out = best;
    noregex = best->match == Location::Match::prefix_no_regex;
    rc = find_in(best->children, path, captures, out);
    if (rc == Found::final_ || rc == Found::slash) return rc;
    rc = Found::prefix;
  }
  if (noregex) return rc;

  for (const auto& l : locs) {
    if (l->match != Location::Match::regex && l->match != Location::Match::regex_icase) continue;
    if (!l->regex->match(path, captures)) continue;
    out = l.get();
    // Nested locations of a regex location are searched too; there
    // nginx takes an auto_redirect location's settings but not its redirect.
    find_in(l->children, path, captures, out);
    return Found::final_;
  }
  return rc;
}

}  // namespace

std::string_view Captures::get(size_t i) const {
  if (i >= spans.size()) return {};
  auto [b, e] = spans[i];
  if (b < 0 || e < b || static_cast<size_t>(e) > subject.size()) return {};
  return std::string_view(subject).substr(static_cast<size_t>(b), static_cast<size_t>(e - b));
}

const Location* find_location(const Server& server, std::string_view path, Captures* captures,
                              bool* slash_redirect) {
  const Location* out = nullptr;
  const Found rc = find_in(server.locations, path, captures, out);
  if (slash_redirect) *slash_redirect = rc == Found::slash;
  return out;
}

const Location* find_named_location(const Server& server, std::string_view name) {
  for (const auto& l : server.locations)
    if (l->match == Location::Match::named && l->pattern == name) return l.get();
  return nullptr;
}

}  // namespace torii::config
