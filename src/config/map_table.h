// What http's map {} and stream's map {} share (ngx_http_map_module and
// ngx_stream_map_module are one design): a block's lines read into exact
// keys, hostname wildcards and regexes, and nginx's lookup order. Each
// side brings its own value type (its template), so only the table is
// shared, not the variables it is rendered with.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/directives.h"
#include "config/regex.h"
#include "core/result.h"

namespace torii::config {

struct Captures;

// How a key is matched. Wildcards exist only with `hostnames`.
enum class MapKeyKind : uint8_t {
  exact,
  head_wildcard,  // "*.example.com" (key ".example.com") or ".example.com" (also the bare name)
  tail_wildcard,  // "www.example.*" (key "www.example.")
  regex,          // "~re" / "~*re", tried in file order after the others
};

template <typename Value>
struct MapTable {
  struct Entry {
    MapKeyKind kind = MapKeyKind::exact;
    std::string key;               // lower-case with hostnames
    bool bare_too = false;         // ".example.com": example.com itself matches too
    std::shared_ptr<Regex> regex;  // kind == regex
    Value value;
  };
  std::vector<Entry> entries;  // exact and wildcard keys first, then regexes in file order
  Value default_value;         // empty unless "default" is given
  bool hostnames = false;
};

namespace map_detail {

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

// A key line's kind; sets `key` (and `bare_too`) to what is compared.
inline MapKeyKind classify(std::string_view raw, bool hostnames, std::string& key, bool& bare_too) {
  bare_too = false;
  if (hostnames && raw.size() > 2 && raw.starts_with("*.")) {
    key = lower(raw.substr(1));
    return MapKeyKind::head_wildcard;
  }
  if (hostnames && raw.size() > 1 && raw[0] == '.') {
    key = lower(raw);
    bare_too = true;
    return MapKeyKind::head_wildcard;
  }
  if (hostnames && raw.size() > 2 && raw.ends_with(".*")) {
    key = lower(raw.substr(0, raw.size() - 1));
    return MapKeyKind::tail_wildcard;
  }
  key = hostnames ? lower(raw) : std::string(raw);
  return MapKeyKind::exact;
}

}  // namespace map_detail

// Reads the block's lines: `default V`, `hostnames`, `volatile`, `KEY V`,
// `~RE V`, `~*RE V`, `\KEY V` (a key that starts like a keyword).
// `compile_value(line, text, regex)` returns the side's Result<Value>;
// `regex` is the line's compiled key (null for other keys), whose named
// groups the value may read.
template <typename Value, typename CompileValue>
Status read_map_lines(const Node& n, MapTable<Value>& m, CompileValue&& compile_value) {
  for (const auto& d : n.children) {
    if (d.block) return node_error(d, "unexpected \"{\"");
    if (d.args.empty() && (d.name == "hostnames" || d.name == "volatile")) {
      if (d.name == "hostnames") m.hostnames = true;
      continue;
    }
    if (d.args.size() != 1) return node_error(d, "invalid number of the map parameters");
    typename MapTable<Value>::Entry e;
    if (d.name.size() > 1 && d.name[0] == '~') {
      // Compiled before the value, which may name its (?<captures>).
      const bool icase = d.name.size() > 2 && d.name[1] == '*';
      auto re = Regex::compile(std::string_view(d.name).substr(icase ? 2 : 1), icase);
      if (!re) return node_error(d, re.error());
      e.kind = MapKeyKind::regex;
      e.regex = std::move(*re);
    }
    auto value = compile_value(d, std::string_view(d.args[0]), static_cast<const Regex*>(e.regex.get()));
    if (!value) return Error{value.error()};
    if (d.name == "default") {
      m.default_value = std::move(*value);
      continue;
    }
    if (d.name == "include") return node_error(d, "\"include\" inside map is not yet supported");
    std::string_view raw = d.name;
    if (!raw.empty() && raw[0] == '\\') raw.remove_prefix(1);  // "\~" is a literal tilde
    if (!e.regex) e.kind = map_detail::classify(raw, m.hostnames, e.key, e.bare_too);
    e.value = std::move(*value);
    m.entries.push_back(std::move(e));
  }
  // Regexes after the keys, in file order (nginx's order).
  std::stable_partition(m.entries.begin(), m.entries.end(), [](const auto& e) { return !e.regex; });
  return Ok{};
}

// nginx's order: the exact key, then the longest leading wildcard, then
// the longest trailing one, then the first regex that matches (none for an
// empty value), else the default. With `hostnames` the key is compared in lower case without a
// trailing dot. `captures` (may be null) receives a regex's groups, and
// `matched` the regex, when it has any.
template <typename Value>
const Value& map_lookup(const MapTable<Value>& m, std::string_view subject, Captures* captures,
                        const Regex** matched) {
  std::string folded;
  if (m.hostnames) {
    if (!subject.empty() && subject.back() == '.') subject.remove_suffix(1);
    folded = map_detail::lower(subject);
    subject = folded;
  }
  const Value* head = nullptr;
  size_t head_len = 0;
  const Value* tail = nullptr;
  size_t tail_len = 0;
  for (const auto& e : m.entries) {
    switch (e.kind) {
      case MapKeyKind::exact:
        if (e.key == subject) return e.value;
        break;
      case MapKeyKind::head_wildcard: {
        const bool match = (subject.size() > e.key.size() && subject.ends_with(e.key)) ||
                           (e.bare_too && subject == std::string_view(e.key).substr(1));
        if (match && e.key.size() > head_len) {
          head = &e.value;
          head_len = e.key.size();
        }
        break;
      }
      case MapKeyKind::tail_wildcard:
        if (subject.size() > e.key.size() && subject.starts_with(e.key) && e.key.size() > tail_len) {
          tail = &e.value;
          tail_len = e.key.size();
        }
        break;
      case MapKeyKind::regex:
        break;
    }
  }
  if (head) return *head;
  if (tail) return *tail;
  // nginx tries no regex on an empty value: `~^$` or `~.*` never match a
  // missing header, which gets the default (ngx_http_map_find).
  if (subject.empty()) return m.default_value;
  for (const auto& e : m.entries) {
    if (e.kind != MapKeyKind::regex) continue;
    const bool groups = captures && e.regex->capture_count() > 0;
    if (!e.regex->match(subject, groups ? captures : nullptr)) continue;
    if (matched) *matched = groups ? e.regex.get() : nullptr;
    return e.value;
  }
  return m.default_value;
}

}  // namespace torii::config
