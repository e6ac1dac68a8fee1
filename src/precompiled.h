// The headers nearly every source file includes, parsed once per target
// and reused (CMake's target_precompile_headers): most files are small,
// and without it a build spent most of its time reading these ~90,000
// lines again for each of them.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/directives.h"
#include "core/event_loop.h"
#include "http/exchange.h"
#include "http/pipeline.h"
#include "http/variables.h"
#include "log/error_log.h"
