#include "stream/session_base.h"

#include "config/directives.h"
#include "dns/resolver.h"
#include "modules/geoip2/database.h"
#include "stream/access.h"
#include "stream/stream_worker.h"

namespace torii::stream {

SessionBase::SessionBase(StreamWorker& w, std::shared_ptr<const config::Config> config, const ListenGroup& group,
                         const sockaddr_storage& peer)
    : worker_(w), config_(std::move(config)), group_(group), server_(*group.server) {
  const StreamConfig& cfg = *config_->stream;
  facts_.peer = peer;
  facts_.connection = worker_.next_connection_id();
  facts_.start_ms = worker_.loop().now_ms();
  facts_.user.resize(cfg.variables.size());
  facts_.user_set.resize(cfg.variables.size());
  facts_.maps = &cfg.maps;
  facts_.splits = &cfg.split_clients;
  facts_.geos = &cfg.geos;
  facts_.geoip = cfg.geoip.get();
  facts_.geoip2 = &cfg.geoip2_variables;
}

int SessionBase::admit(const AdmitLog& log) {
  if (!limit_conn_.take(server_.settings, facts_, log)) return 503;
  if (!access_allowed(server_.settings.access_rules, facts_.peer)) {
    log(config::LogLevel::error, "access forbidden by rule");
    return 403;
  }
  for (const auto& step : server_.sets) {
    std::string value;
    render(step.value, facts_, value);
    if (step.slot < facts_.user.size()) {
      facts_.user[step.slot] = std::move(value);
      facts_.user_set[step.slot] = true;
    }
  }
  return 0;
}

void SessionBase::choose_upstream(UpstreamChosen chosen, std::function<void(int status)> end) {
  lookup_ = stream::choose_upstream(worker_, *config_->stream, server_, facts_, std::move(chosen),
                                    [this, end = std::move(end)](const std::string& error) {
                                      log_session_error(error_context(), config::LogLevel::error, error, 0,
                                                        "connecting to upstream");
                                      end(500);  // as nginx's stream: no upstream to blame yet
                                    });
}

void SessionBase::end_session(int status) {
  lookup_.reset();
  limit_conn_.release();
  worker_.log_session(server_.settings, facts_, status);
  geoip2::check_for_changes(config_->stream->geoip2_databases);  // auto_reload, in the log phase
}

uint64_t SessionBase::render_rate(const Rate& r, const char* directive) {
  if (!r.value) return r.bytes;
  std::string text;
  render(*r.value, facts_, text);
  int64_t v = 0;
  if (!config::parse_size(text, v) || v < 0) {
    log_session_error(error_context(), config::LogLevel::error,
                      "invalid size \"" + text + "\" in \"" + directive + "\"", 0, nullptr);
    return 0;
  }
  return uint64_t(v);
}

ErrorContext SessionBase::error_context() const {
  ErrorContext c;
  c.settings = &server_.settings;
  c.connection = facts_.connection;
  c.peer = &facts_.peer;
  c.server = &group_.listen.text;
  c.udp = facts_.udp;
  if (!facts_.upstream_addr.empty()) c.upstream = &facts_.upstream_addr.back();
  return c;
}

}  // namespace torii::stream
