// limit_conn in stream (ngx_stream_limit_conn_module): in the preaccess
// phase each limit of the server adds one to its key's count in the zone,
// or refuses the session (503) when the key is at its number; the counts
// are given back when the session ends. The zone's table is the http
// module's (modules/limit_conn/conn_table), one per zone name.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "modules/limit_conn/conn_table.h"
#include "stream/stream_config.h"
#include "stream/variables.h"

namespace torii::stream {

class ConnHolds {
 public:
  using Log = std::function<void(config::LogLevel, const std::string&)>;

  ConnHolds() = default;
  ~ConnHolds() { release(); }
  ConnHolds(const ConnHolds&) = delete;
  ConnHolds& operator=(const ConnHolds&) = delete;

  // Takes a count in every limit of `s`; false: the session is refused
  // (its counts given back). Sets f.limit_conn_status.
  bool take(const Settings& s, Facts& f, const Log& log);
  void release();

 private:
  struct Held {
    std::shared_ptr<limits::ConnTable> table;
    limits::ConnTable::Hold hold;
  };
  std::vector<Held> held_;
};

// $limit_conn_status: false (not found) before limit_conn decided.
bool append_limit_conn_status(uint8_t status, std::string& out);

}  // namespace torii::stream
