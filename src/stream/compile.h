// The `stream {}` block's compiler; its one entry point is the `stream`
// row of the directive table (config::stream_directives()).
#pragma once

#include "stream/stream_config.h"
