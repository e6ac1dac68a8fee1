// The admin API's upstream documents, shaped like NGINX Plus's API version 9
// (http/upstreams): a group with its peers' state and counters, a server's
// settings, and a server change read from a request body.
#pragma once

#include <string>

#include "config/upstream_config.h"
#include "modules/admin_api/json.h"
#include "upstream/live_group.h"

namespace torii::admin_api {

// {"peers":[...],"keepalive":N,"zombies":0,"zone":NAME}
void append_upstream(std::string& out, const config::UpstreamGroupConfig& group);
// {"id":0,"server":"127.0.0.1:8080","weight":1,...} as /servers shows it.
void append_server(std::string& out, const config::UpstreamServer& s);
void append_servers(std::string& out, const config::UpstreamGroupConfig& group);

// The fields of a POST or PATCH body; an error names the bad field. `id`
// is the server a PATCH addresses (-1 for POST).
Result<upstream::ServerChange> read_server_change(const JsonValue& body, long id);

}  // namespace torii::admin_api
