#include "modules/referer/referer.h"

#include <strings.h>

#include <string_view>

#include "config/referer_config.h"
#include "config/regex.h"
#include "http/exchange.h"

namespace torii::referer {

namespace {

using config::RefererConfig;
using config::ServerName;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// nginx's combined hash lookup: an exact name first, then the longest
// leading wildcard, then the longest trailing one. Returns the matching
// host's URI part through `uri` (null: any path).
struct Found {
  bool hit = false;
  const std::string* uri = nullptr;
};

void consider(const ServerName& n, const std::string* uri, std::string_view host, int& best_rank, size_t& best_len,
              Found& found) {
  int rank = 0;
  bool hit = false;
  switch (n.kind) {
    case ServerName::Kind::exact:
      rank = 3;
      hit = n.name == host;
      break;
    case ServerName::Kind::wildcard_front:
      rank = 2;
      hit = (host.size() > n.name.size() && ends_with(host, n.name)) ||
            (n.matches_bare && host == std::string_view(n.name).substr(1));
      break;
    case ServerName::Kind::wildcard_back:
      rank = 1;
      hit = host.size() > n.name.size() && starts_with(host, n.name);
      break;
    case ServerName::Kind::regex:
      return;  // after the hash, below
  }
  if (!hit) return;
  if (rank < best_rank || (rank == best_rank && n.name.size() <= best_len)) return;
  best_rank = rank;
  best_len = n.name.size();
  found = {true, uri};
}

}  // namespace

bool invalid(const http::Exchange& ex) {
  const auto& r = ex.settings().referer;
  if (!r) return false;
  const bool server_names = r->server_names && ex.server;
  if (r->hosts.empty() && r->regexes.empty() && !server_names) return false;

  const http::Header* field = ex.req.find(http::HeaderToken::referer);
  if (!field) return !r->none;
  std::string_view ref = field->value;
  // "http://i.ru" is the shortest referer nginx looks into.
  if (ref.size() >= 11 && strncasecmp(ref.data(), "http://", 7) == 0) {
    ref.remove_prefix(7);
  } else if (ref.size() >= 11 && strncasecmp(ref.data(), "https://", 8) == 0) {
    ref.remove_prefix(8);
  } else {
    return !r->blocked;
  }

  // The host: up to '/' or ':' (the port is not compared), lower-cased, at
  // most 256 bytes.
  std::string host;
  size_t end = 0;
  while (end < ref.size() && ref[end] != '/' && ref[end] != ':') {
    if (end == 256) return true;
    char c = ref[end++];
    host.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c | 0x20) : c);
  }

  Found found;
  int best_rank = 0;
  size_t best_len = 0;
  for (const auto& h : r->hosts) consider(h.host, h.uri.empty() ? nullptr : &h.uri, host, best_rank, best_len, found);
  if (server_names)
    for (const auto& n : ex.server->names) consider(n, nullptr, host, best_rank, best_len, found);
  if (found.hit) {
    if (!found.uri) return false;
    // The path after the host (and port) must start with the URI part.
    const size_t slash = ref.find('/', end);
    const std::string_view path = slash == std::string_view::npos ? std::string_view() : ref.substr(slash);
    return !starts_with(path, *found.uri);
  }
  if (server_names)
    for (const auto& n : ex.server->names)
      if (n.kind == ServerName::Kind::regex && n.regex && n.regex->match(host, nullptr)) return false;
  for (const auto& re : r->regexes)
    if (re->match(ref, nullptr)) return false;
  return true;
}

}  // namespace torii::referer
