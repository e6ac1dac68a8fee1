#include "http/stream_request.h"

#include <string>

#include "core/clock.h"
#include "http/pipeline.h"
#include "log/error_log.h"

namespace torii::http {

bool prepare_stream_request(Exchange& ex, std::shared_ptr<const config::Config> config,
                            const config::ListenGroup& group, FieldSection& fields, int version, bool had_body) {
  ex.config = std::move(config);
  ex.server = group.default_server.get();
  ex.start_unix_ms = core::unix_ms();
  std::string reason;
  const int status = fields.build(ex, version, had_body, reason);
  if (status != 0) {
    TORII_LOG(info, "%s, client: %s", reason.c_str(), ex.socket_conn().remote_addr.c_str());
    send_error(ex, status);
    return false;
  }
  ex.server = &config::find_server(group, ex.req.host);
  return true;
}

}  // namespace torii::http
