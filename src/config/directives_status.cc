// Status pages: stub_status and the autoindex module's directives, with
// nginx's contexts and defaults.
#include <memory>
#include <string>

#include "config/autoindex_config.h"
#include "config/directives.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

Status set_stub_status(Compiler& c, Scope& s, const Node& n) {
  // nginx before 1.7.5 took an argument ("stub_status on"); it still
  // accepts and ignores one.
  if (n.args.size() == 1) c.warn(n, "the \"stub_status\" directive's argument is ignored");
  s.settings->stub_status = true;
  return Ok{};
}

// Copy on write: a block changes its own copy of what it inherited.
AutoindexConfig& autoindex_of(Scope& s) {
  auto copy = s.settings->autoindex ? std::make_shared<AutoindexConfig>(*s.settings->autoindex)
                                    : std::make_shared<AutoindexConfig>();
  AutoindexConfig* raw = copy.get();
  s.settings->autoindex = std::move(copy);
  return *raw;
}

template <bool AutoindexConfig::*F>
Status set_autoindex_flag(Compiler&, Scope& s, const Node& n) {
  autoindex_of(s).*F = n.args[0] == "on";
  return Ok{};
}

Status set_autoindex_format(Compiler&, Scope& s, const Node& n) {
  using F = AutoindexConfig::Format;
  const std::string& v = n.args[0];
  F f;
  if (v == "html") f = F::html;
  else if (v == "json") f = F::json;
  else if (v == "xml") f = F::xml;
  else if (v == "jsonp") f = F::jsonp;
  else
    return node_error(n, "invalid value \"" + v + "\" in \"" + n.name +
                             "\" directive, it must be \"html\", \"xml\", \"json\" or \"jsonp\"");
  autoindex_of(s).format = f;
  return Ok{};
}

constexpr DirectiveSpec kStatusDirectives[] = {
    {"stub_status", kServer | kLocation, kArgs0 | kArgs1, true, false, kMain, &set_stub_status},
    {"autoindex", kHSL, kFlag, true, false, kMain, &set_autoindex_flag<&AutoindexConfig::enabled>},
    {"autoindex_exact_size", kHSL, kFlag, true, false, kMain, &set_autoindex_flag<&AutoindexConfig::exact_size>},
    {"autoindex_format", kHSL, kArgs1, true, false, kMain, &set_autoindex_format},
    {"autoindex_localtime", kHSL, kFlag, true, false, kMain, &set_autoindex_flag<&AutoindexConfig::localtime>},
};

}  // namespace

std::span<const DirectiveSpec> status_directives() { return kStatusDirectives; }

}  // namespace torii::config
