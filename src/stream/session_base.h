// What every stream session, TCP or UDP, holds and does first and last:
// its worker, the config it started with (kept alive across a reload),
// its listen address and server, its facts (number, clock, the block's
// `set` slots and the maps, split_clients, geo and geoip tables the
// variables read) and limit_conn counts; nginx's preaccess and access
// phases and the server's `set` steps; the choice of the upstream group
// (`proxy_pass`, pass_target.h); and at the end the counts given back and
// the access log line.
#pragma once

#include <sys/socket.h>

#include <functional>
#include <memory>
#include <string>

#include "config/config.h"
#include "stream/limit_conn/limit_conn.h"
#include "stream/pass_target.h"
#include "stream/session_log.h"
#include "stream/stream_config.h"
#include "stream/variables.h"

namespace torii::stream {

class StreamWorker;

class SessionBase {
 protected:
  SessionBase(StreamWorker& w, std::shared_ptr<const config::Config> config, const ListenGroup& group,
              const sockaddr_storage& peer);
  ~SessionBase() = default;
  SessionBase(const SessionBase&) = delete;
  SessionBase& operator=(const SessionBase&) = delete;

  // limit_conn (503), then allow/deny (403, logged "access forbidden by
  // rule"), then `set` in order. 0: the session goes on; else the status
  // it ends with. `log` writes the session's line "while initializing
  // session".
  using AdmitLog = std::function<void(config::LogLevel, const std::string&)>;
  int admit(const AdmitLog& log);
  // proxy_pass: `chosen` gets the group, at once or once the resolver
  // answers; when there is none, nginx's complaint is logged "while
  // connecting to upstream" and `end` gets 502.
  void choose_upstream(UpstreamChosen chosen, std::function<void(int status)> end);
  // A lookup under way dropped, the limit_conn counts given back, then
  // the access log line.
  void end_session(int status);
  // proxy_upload_rate / proxy_download_rate's value for this session; a
  // variable that renders no size is logged and means no limit.
  uint64_t render_rate(const Rate& r, const char* directive);
  // The error-log context of this session (the caller adds the byte counts).
  ErrorContext error_context() const;

  StreamWorker& worker_;
  std::shared_ptr<const config::Config> config_;
  const ListenGroup& group_;
  const Server& server_;
  Facts facts_;
  ConnHolds limit_conn_;

 private:
  std::shared_ptr<dns::Lookup> lookup_;  // proxy_pass $var naming a host: the resolver's answer
};

}  // namespace torii::stream
