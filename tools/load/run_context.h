// What every thread of a run shares, read-only once the run starts.
#pragma once

#include <sys/socket.h>

#include <string>

#include "load/options.h"
#include "load/request_template.h"
#include "load/quic_tls.h"
#include "load/tls_client.h"

namespace torii::load {

struct RunContext {
  const Options& options;
  const RequestTemplates& templates;
  sockaddr_storage address{};
  socklen_t address_length = 0;
  TlsClient* tls = nullptr;  // null for http:// and for --h3
  QuicTls* quic = nullptr;   // --h3 only
  std::string server_name;   // SNI; empty for an IP literal
};

}  // namespace torii::load
