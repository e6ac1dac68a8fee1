// Variables about who the client is: $binary_remote_addr, the realip
// module's $realip_remote_addr/_port (the peer before realip), and the
// PROXY protocol header's $proxy_protocol_addr/_port/_server_addr/_server_port.
#pragma once

#include <string>

#include "config/template.h"

namespace torii::http {
class Exchange;
}

namespace torii::realip {

// False: the variable has no value here (not found: "-" in logs).
bool append_variable(config::VarId id, const http::Exchange& ex, std::string& out);

}  // namespace torii::realip
