// The files of error logs of their own (stream's per-server `error_log`,
// http's in http, server and location blocks):
// one descriptor per path for the process, opened when a config names it
// and kept under the same number for the process's life, so a session
// never writes to a closed descriptor; SIGUSR1 reopens them with the main
// log (the new file dup3()'d onto that number).
#pragma once

#include <string>

#include "config/config.h"
#include "core/result.h"

namespace torii::log {

// The descriptor for `path` (absolute, or "stderr"); -1 with errno when it
// cannot be opened.
int server_error_log_fd(const std::string& path);

// Called by reopen_error_log().
void reopen_server_error_logs();

// Opens (creating them) the error_log files of the config's http, server
// and location blocks, as nginx opens every log when a config loads; the
// first that fails is the error, in nginx's words.
Status open_request_error_logs(const config::Config& cfg);

}  // namespace torii::log
