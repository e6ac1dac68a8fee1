// The settings of a gateway to an application (fastcgi_*, uwsgi_*, scgi_*,
// grpc_* and memcached_*):
// the upstream part is the proxy's (ProxyConfig: the group, timeouts,
// buffers, next_upstream, intercept_errors, hidden and passed fields), the
// rest is what the application is told (params) and how. One object per
// module and block, merged down http -> server -> location like the rest.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/proxy_config.h"
#include "config/template.h"

namespace torii::config {

class Regex;

struct CgiParam {
  std::string name;
  Template value;
  bool if_not_empty = false;  // not sent when the value renders empty
};

struct CgiConfig {
  ProxyConfig upstream;  // upstream.upstream or url_template set: *_pass is this location's handler
  bool passes() const { return upstream.upstream || !upstream.url_template.empty(); }
  std::vector<CgiParam> params;  // *_param (a block with any replaces the inherited list)
  // FastCGI.
  std::string index;                       // fastcgi_index: appended to a URI ending in '/'
  std::shared_ptr<Regex> split_path_info;  // fastcgi_split_path_info: $fastcgi_script_name, $fastcgi_path_info
  bool keep_conn = false;                  // fastcgi_keep_conn
  std::vector<std::string> catch_stderr;   // fastcgi_catch_stderr
  // uwsgi.
  uint8_t modifier1 = 0;
  uint8_t modifier2 = 0;
  // memcached.
  Template memcached_key;   // "$memcached_key", compiled where memcached_pass is
  uint64_t gzip_flag = 0;   // memcached_gzip_flag: the item flags' bits that mean gzip (0: none)
  std::string uwsgi_string;  // uwsgi_string: bytes appended to the vars, counted in the packet's size
};

}  // namespace torii::config
