// What the ssl_*, proxy_ssl_* and grpc_ssl_* directives share: the server's
// TLS settings copied on write, TLS file names, the protocol list.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/directives.h"
#include "config/ssl_config.h"

namespace torii::config {

// The server's SslServerConfig, made private to this block first: servers
// that set nothing keep sharing their parent's settings (and context).
SslServerConfig& writable_ssl(Scope& s, const Node& n);

// A TLS file named by the directive's first argument. Like nginx, a relative
// name is relative to the main config file's directory. Variables, "data:"
// and "engine:" are refused.
Result<SslFile> tls_file_arg(Compiler& c, const Node& n);

// The main config file's directory, with its trailing slash.
std::string tls_conf_dir(Compiler& c);

// ssl_protocols' arguments as kSslV2... bits; for the upstream directives
// (proxy_ssl_protocols...), warns of the protocols OpenSSL 3 refuses at its
// default security level.
Result<uint8_t> tls_protocols_arg(Compiler& c, const Node& n);

// ssl_password_file and its upstream twins (proxy_, grpc_, uwsgi_): the
// file's passphrases, one a line, read now (directives_ssl_password.cc).
Result<std::shared_ptr<const std::vector<std::string>>> read_password_file(Compiler& c, const Node& n);

}  // namespace torii::config
