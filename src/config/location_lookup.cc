// Location selection, following nginx's ngx_http_core_find_location(): at
// each level the exact or longest prefix match, then (unless it is ^~) that
// location's nested locations, then this level's regexes in file order.
#include "config/config.h"
#include "config/regex.h"

namespace torii::config {

namespace {

using Locations = std::vector<std::shared_ptr<const Location>>;

enum class Found : uint8_t {
  none,      // nothing at this level
  prefix,    // a prefix matched; regexes of outer levels may still win
  final_,    // an exact match or a regex: stop everywhere
};

Found find_in(const Locations& locs, std::string_view path, Captures* captures, const Location*& out) {
  const Location* best = nullptr;
  for (const auto& l : locs) {
    switch (l->match) {
      case Location::Match::exact:
        if (path == l->pattern) {
          out = l.get();
          return Found::final_;
        }
        break;
      case Location::Match::prefix:
      case Location::Match::prefix_no_regex:
        if (path.substr(0, l->pattern.size()) == l->pattern &&
            (!best || l->pattern.size() > best->pattern.size()))
          best = l.get();
        break;
      default:
        break;
    }
  }

  Found rc = Found::none;
  bool noregex = false;
  if (best) {
    out = best;
    noregex = best->match == Location::Match::prefix_no_regex;
    rc = find_in(best->children, path, captures, out);
    if (rc == Found::final_) return rc;
    rc = Found::prefix;
  }
  if (noregex) return rc;

  for (const auto& l : locs) {
    if (l->match != Location::Match::regex && l->match != Location::Match::regex_icase) continue;
    if (!l->regex->match(path, captures)) continue;
    out = l.get();
    // Nested locations of a regex location are searched too.
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

const Location* find_location(const Server& server, std::string_view path, Captures* captures) {
  const Location* out = nullptr;
  find_in(server.locations, path, captures, out);
  return out;
}

const Location* find_named_location(const Server& server, std::string_view name) {
  for (const auto& l : server.locations)
    if (l->match == Location::Match::named && l->pattern == name) return l.get();
  return nullptr;
}

}  // namespace torii::config
