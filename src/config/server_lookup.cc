// Virtual server selection by Host, in nginx's order of precedence.
#include "config/config.h"
#include "config/regex.h"

namespace torii::config {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

const Server& find_server(const ListenGroup& group, std::string_view host) {
  // 1. Exact names.
  for (const auto& srv : group.servers)
    for (const auto& n : srv->names)
      if (n.kind == ServerName::Kind::exact && n.name == host) return *srv;

  // 2. The longest leading wildcard ("*.example.com" is stored ".example.com").
  const Server* best = nullptr;
  size_t best_len = 0;
  for (const auto& srv : group.servers) {
    for (const auto& n : srv->names) {
      if (n.kind != ServerName::Kind::wildcard_front || n.name.size() <= best_len) continue;
      bool hit = (host.size() > n.name.size() && ends_with(host, n.name)) ||
                 (n.matches_bare && host == std::string_view(n.name).substr(1));
      if (hit) {
        best = srv.get();
        best_len = n.name.size();
      }
    }
  }
  if (best) return *best;

  // 3. The longest trailing wildcard ("www.*" is stored "www.").
  for (const auto& srv : group.servers) {
    for (const auto& n : srv->names) {
      if (n.kind != ServerName::Kind::wildcard_back || n.name.size() <= best_len) continue;
      if (host.size() > n.name.size() && starts_with(host, n.name)) {
        best = srv.get();
        best_len = n.name.size();
      }
    }
  }
  if (best) return *best;

  // 4. Regular expressions in the order they appear.
  for (const auto& srv : group.servers)
    for (const auto& n : srv->names)
      if (n.kind == ServerName::Kind::regex && n.regex && n.regex->match(host, nullptr)) return *srv;

  return *group.default_server;
}

}  // namespace torii::config
