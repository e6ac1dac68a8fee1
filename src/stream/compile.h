// The `stream {}` block's compiler; its one entry point is the `stream`
// row of the directive table (config::stream_directives()).
#pragma once

#include "stream/stream_config.h"

namespace torii::stream {

// Once the http listen groups are built: no address may be both an http
// and a stream one.
Status check_listen_addresses(const config::Config& cfg);

}  // namespace torii::stream
