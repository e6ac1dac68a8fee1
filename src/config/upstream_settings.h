// The upstream settings (ProxyConfig) a directive of the proxy, fastcgi,
// uwsgi, scgi or grpc module edits, chosen by the directive's prefix and
// copied on write, so that one setter serves a whole family of directives
// (proxy_store, fastcgi_store, ...) instead of one per module.
#pragma once

#include <string_view>

#include "config/directives.h"
#include "config/proxy_config.h"

namespace torii::config {

// "proxy", "fastcgi", "uwsgi", "scgi" or "grpc": the part before the first '_'.
std::string_view upstream_module_of(std::string_view directive);

ProxyConfig& edit_upstream_settings(Scope& s, std::string_view directive);

// The settings as inherited into this block, unchanged (null: none yet).
const ProxyConfig* upstream_settings(const Scope& s, std::string_view directive);

}  // namespace torii::config
