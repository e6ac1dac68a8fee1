// The referer module's directives (nginx's ngx_http_referer_module):
// valid_referers, and referer_hash_max_size / referer_hash_bucket_size,
// which size a hash torii does not build (accepted, checked as sizes).
#include <string>

#include "config/directives.h"
#include "core/quote.h"
#include "config/referer_config.h"
#include "config/regex.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// A host as server_name spells one; false for a malformed wildcard.
bool parse_host(std::string name, ServerName& sn) {
  classify_server_name(std::move(name), sn);
  return sn.name.find('*') == std::string::npos && !sn.name.empty();
}

// A block's first valid_referers replaces what it inherited; later ones in
// the same block add to it. As nginx's merge, a block whose lines have no
// regex keeps its parent's regexes.
Status set_valid_referers(Compiler&, Scope& s, const Node& n) {
  auto c = std::make_shared<RefererConfig>();
  const bool first = !s.referer_here;
  if (s.settings->referer) {
    if (first) c->regexes = s.settings->referer->regexes;
    else *c = *s.settings->referer;
  }
  bool regex_here = !first && s.referer_regex_here;
  for (const auto& a : n.args) {
    if (a.empty()) return node_error(n, "invalid referer " + q(a));
    if (a == "none") {
      c->none = true;
    } else if (a == "blocked") {
      c->blocked = true;
    } else if (a == "server_names") {
      c->server_names = true;
    } else if (a[0] == '~') {
      if (a.size() == 1) return node_error(n, "empty regex in " + q(a));
      auto re = Regex::compile(std::string_view(a).substr(1), true);
      if (!re) return node_error(n, re.error());
      if (!regex_here) c->regexes.clear();
      regex_here = true;
      c->regexes.push_back(std::move(*re));
    } else {
      RefererHost h;
      const size_t slash = a.find('/');
      if (slash != std::string::npos) h.uri = a.substr(slash);
      if (!parse_host(a.substr(0, slash), h.host)) return node_error(n, "invalid hostname or wildcard " + q(a.substr(0, slash)));
      c->hosts.push_back(std::move(h));
    }
  }
  if (first) {
    // Once the block's lines are all read, as nginx's merge checks it; it
    // counts hosts and server names, not regexes.
    LocationSettings* settings = s.settings;
    const Node* line = &n;
    s.after_plain.push_back([settings, line]() -> Status {
      const RefererConfig& r = *settings->referer;
      if ((r.none || r.blocked) && r.hosts.empty() && !r.server_names)
        return node_error(*line, "the \"none\" or \"blocked\" referers are specified in the \"valid_referers\" "
                                 "directive without any valid referer");
      return Ok{};
    });
  }
  s.referer_here = true;
  s.referer_regex_here = regex_here;
  s.settings->referer = std::move(c);
  return Ok{};
}

Status accept_hash_size(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return node_error(n, "invalid value " + q(n.args[0]) + " in " + q(n.name) + " directive");
  return Ok{};
}

constexpr DirectiveSpec kRefererDirectives[] = {
    {"valid_referers", kHSL, kArgs1More, false, false, kMain, &set_valid_referers},
    {"referer_hash_max_size", kHSL, kArgs1, true, false, kMain, &accept_hash_size},
    {"referer_hash_bucket_size", kHSL, kArgs1, true, false, kMain, &accept_hash_size},
};

}  // namespace

std::span<const DirectiveSpec> referer_directives() { return kRefererDirectives; }

}  // namespace torii::config
