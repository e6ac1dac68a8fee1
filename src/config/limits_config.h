// Settings of the rate and connection limits (limit_req, limit_conn,
// limit_rate) and of authentication (auth_basic, auth_request, satisfy),
// as a location sees them after the http -> server -> location merge.
// The zones themselves (the shared tables) live in modules/limit_req and
// modules/limit_conn; a zone's definition is per config, its table
// outlives reloads (by name and size), as nginx's shared memory does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/template.h"

namespace torii::limits {
class ReqTable;   // modules/limit_req/req_table.h
class ConnTable;  // modules/limit_conn/conn_table.h
}  // namespace torii::limits

namespace torii::config {

enum class LogLevel : uint8_t;

// limit_req_zone / limit_conn_zone: one shared-memory zone by name. Made
// on the first mention of the name (limit_req may name a zone written
// later in the http block); `defined` once its *_zone directive ran.
struct LimitZone {
  enum class Kind : uint8_t { req, conn };
  std::string name;
  Kind kind = Kind::req;
  bool defined = false;
  size_t size = 0;
  Template key;
  uint64_t rate = 0;  // limit_req: milli-requests per second (nginx's ctx->rate)
  std::shared_ptr<limits::ReqTable> req_table;
  std::shared_ptr<limits::ConnTable> conn_table;
};

struct LimitReqRule {
  std::shared_ptr<const LimitZone> zone;
  uint64_t burst = 0;  // milli-requests
  uint64_t delay = 0;  // milli-requests passed without delay (nodelay: all of the burst)
};

struct LimitConnRule {
  std::shared_ptr<const LimitZone> zone;
  uint32_t conn = 0;
};

// An `auth_request_set $var value`: value rendered against the subrequest.
struct AuthRequestSet {
  uint32_t slot = 0;  // the `set`-style variable slot (VarId::user_)
  Template value;
  bool args = false;        // $args: the request's arguments, as `set $args`
  bool limit_rate = false;  // $limit_rate: the response's pace
};

struct LimitsSettings {
  // limit_req: inherited only when none at this level.
  std::vector<LimitReqRule> req;
  int req_status = 503;
  LogLevel req_log_level{4};  // error
  bool req_dry_run = false;
  // limit_conn: the same.
  std::vector<LimitConnRule> conn;
  int conn_status = 503;
  LogLevel conn_log_level{4};
  bool conn_dry_run = false;
  // limit_rate / limit_rate_after, bytes per second and bytes; 0: off.
  // With variables (`limit_rate $rate`, from a map) the value is rendered
  // per request instead.
  int64_t rate = 0;
  int64_t rate_after = 0;
  Template rate_template;
  Template rate_after_template;
  // auth_basic: off, or the realm (a template).
  bool auth_basic = false;
  Template auth_basic_realm;
  Template auth_basic_user_file;
  // auth_request: empty is off.
  std::string auth_request_uri;
  std::vector<AuthRequestSet> auth_request_set;
  bool satisfy_any = false;
};

}  // namespace torii::config
