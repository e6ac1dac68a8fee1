#include "config/upstream_settings.h"

#include "config/directives_cgi.h"

namespace torii::config {

namespace {

cgi::Member cgi_member(std::string_view module) {
  if (module == "fastcgi") return &LocationSettings::fastcgi;
  if (module == "uwsgi") return &LocationSettings::uwsgi;
  if (module == "scgi") return &LocationSettings::scgi;
  return &LocationSettings::grpc;
}

}  // namespace

std::string_view upstream_module_of(std::string_view directive) { return directive.substr(0, directive.find('_')); }

ProxyConfig& edit_upstream_settings(Scope& s, std::string_view directive) {
  const std::string_view module = upstream_module_of(directive);
  if (module != "proxy") return cgi::editable(s, cgi_member(module)).upstream;
  auto copy = s.settings->proxy ? std::make_shared<ProxyConfig>(*s.settings->proxy) : std::make_shared<ProxyConfig>();
  ProxyConfig* raw = copy.get();
  s.settings->proxy = std::move(copy);
  return *raw;
}

const ProxyConfig* upstream_settings(const Scope& s, std::string_view directive) {
  const std::string_view module = upstream_module_of(directive);
  if (module == "proxy") return s.settings->proxy.get();
  const auto& slot = s.settings->*cgi_member(module);
  return slot ? &slot->upstream : nullptr;
}

}  // namespace torii::config
