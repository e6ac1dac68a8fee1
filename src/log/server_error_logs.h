// The files of error logs of their own (stream's per-server `error_log`):
// one descriptor per path for the process, opened when a config names it
// and kept under the same number for the process's life, so a session
// never writes to a closed descriptor; SIGUSR1 reopens them with the main
// log (the new file dup3()'d onto that number).
#pragma once

#include <string>

namespace torii::log {

// The descriptor for `path` (absolute, or "stderr"); -1 with errno when it
// cannot be opened.
int server_error_log_fd(const std::string& path);

// Called by reopen_error_log().
void reopen_server_error_logs();

}  // namespace torii::log
