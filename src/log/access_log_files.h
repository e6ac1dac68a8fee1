// nginx opens every access_log file when it loads a config (start, -t and
// reload), so each exists before the first request and a path that cannot
// be opened is an error then, not a line dropped later. The workers still
// open their own descriptors when they first write (access_log.h).
#pragma once

#include "config/config.h"
#include "core/result.h"

namespace torii::log {

// Opens (creating it, mode 0644) and closes each file of
// Config::access_log_files. The first that fails is the error, in nginx's
// words: open() "PATH" failed (ERRNO: TEXT).
Status create_access_log_files(const config::Config& cfg);

}  // namespace torii::log
