// The stub_status content handler: nginx's status page, byte for byte, so
// the dashboards and exporters that read nginx's read torii's; and the
// $connections_* variables.
#pragma once

#include <string>

#include "config/template.h"

namespace torii::http {
class Exchange;
}

namespace torii::stub_status {

// "Active connections: N \nserver accepts handled requests\n N N N \n
// Reading: N Writing: N Waiting: N \n"
std::string page_text();
void serve(http::Exchange& ex);
bool append_variable(config::VarId id, std::string& out);

}  // namespace torii::stub_status
