// What a wire protocol keeps about an upstream connection from one request
// to the next (HTTP/2: the session with its HPACK tables, stream ids,
// windows and the peer's SETTINGS). The keep-alive pool holds it with the
// idle connection and looks inside only through idle_input(); the codec
// that gives the connection back detaches it, the next one adopts it.
// HTTP/1, FastCGI and uwsgi keep nothing: their connections carry no state,
// and anything the server sends on them while idle closes them.
#pragma once

#include <string>
#include <string_view>

namespace torii::upstream {

class ConnectionState {
 public:
  virtual ~ConnectionState() = default;
  // Bytes the server sent while the connection was idle (a protocol's own
  // traffic: HTTP/2 PING, SETTINGS). True keeps the connection, with what
  // must be answered appended to `reply`; false closes it.
  virtual bool idle_input(std::string_view in, std::string& reply) = 0;
};

}  // namespace torii::upstream
