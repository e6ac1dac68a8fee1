// What the upstream session (proxy.cc) asks of a wire protocol: how the
// request goes out (head, body pieces, end of body) and how the response
// comes back (head, body, whether the connection may serve another
// request). Connecting, pools, balancing, retries, passive health,
// timeouts and back-pressure stay in the session, the same for every
// protocol; HTTP/1.x (proxy_pass), FastCGI (fastcgi_pass), uwsgi
// (uwsgi_pass), SCGI, gRPC and memcached (memcached_pass) each implement this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "handlers/proxy_headers.h"
#include "http1/parser.h"
#include "http1/response_parser.h"
#include "upstream/connection_state.h"

namespace torii::cache {
struct UpstreamRequestChanges;
}

namespace torii::handlers {

class UpstreamCodec {
 public:
  virtual ~UpstreamCodec() = default;

  // For log lines: "http", "fastcgi", "uwsgi" (nginx's upstream: "fastcgi://...").
  virtual const char* scheme() const = 0;
  // The URI part of the upstream's address in log lines (HTTP only).
  virtual std::string_view log_uri() const { return {}; }

  // ---- request
  // What proxy_cache changes in the request (HEAD as GET, conditionals);
  // kept by reference for the session's life. False: this protocol sends
  // the request as the client made it (only HTTP knows the changes).
  virtual bool use_cache_changes(const cache::UpstreamRequestChanges&) { return false; }
  // A body of unknown length may go as it comes (else it is read whole first).
  virtual bool streams_unknown_length() const = 0;
  // Appends the request head for the body described; true when it asked for
  // a protocol upgrade (a 101 may follow).
  virtual bool request_head(RequestBody body, int64_t length, std::string& out) = 0;
  virtual void body_piece(std::string_view data, std::string& out) = 0;
  virtual void body_end(std::string& out) = 0;
  // A body kept in a file goes by sendfile: in records of at most this many
  // bytes, each after body_record_header(); 0 means unframed.
  virtual size_t body_record_max() const { return 0; }
  virtual void body_record_header(size_t, std::string&) {}

  // ---- response
  virtual void reset() = 0;  // a new try
  // Parses the response head from `in` (the bytes read so far, from the
  // first). On done, `consumed` bytes of `in` are used up and `out` holds
  // views valid until the next reset().
  virtual http1::ParseStatus parse_head(std::string_view in, http1::ParsedResponse& out, size_t& consumed) = 0;
  virtual const char* error() const = 0;
  // Whether a 1xx other than 101 is an interim response to skip.
  virtual bool interim_responses() const { return false; }
  // How the client's response is framed, given the upstream's head.
  virtual http1::BodyFraming start_body(const http1::ParsedResponse& r, bool head_request) = 0;
  enum class Body : uint8_t { more, done, error };
  // Decodes body bytes (an empty `in` may still flush what the head's
  // reading left); `consumed` says how much of `in` belonged to the response.
  virtual Body feed_body(std::string_view in, size_t& consumed, const std::function<void(std::string_view)>& emit) = 0;
  // The end of the upstream's stream is the end of the body.
  virtual bool ends_at_eof() const = 0;
  // After a complete response: the connection may serve another request.
  virtual bool reusable(const http1::ParsedResponse& r) const = 0;
  // Lines the application wrote to its error stream (FastCGI STDERR)
  // since the last call, for the error log; `name` says whose.
  virtual bool take_stderr(std::string&) { return false; }
  virtual const char* name() const { return ""; }
  // A line of the protocol's own for the error log, written with the
  // upstream's context ("... while reading upstream, client: ...") while
  // the response goes on (memcached's "invalid trailer", its miss at info).
  virtual bool take_log_line(config::LogLevel&, std::string&) { return false; }

  // ---- multiplexed protocols (gRPC over HTTP/2)
  // The request body keeps going up after the response head came back.
  virtual bool full_duplex() const { return false; }
  // The protocols to offer over TLS (ALPN, wire format); empty: none.
  virtual std::string_view alpn() const { return {}; }
  // Bytes the protocol itself must send after reading (acknowledgements,
  // window updates, body held back for the upstream's flow control).
  virtual void take_output(std::string&) {}
  // Request body bytes the codec holds for later (flow control).
  virtual size_t buffered() const { return 0; }
  // The response's trailer fields, once its body is done.
  virtual bool take_trailers(std::vector<std::pair<std::string, std::string>>&) { return false; }
  // The upstream said it did not act on the request (HTTP/2 REFUSED_STREAM,
  // or a GOAWAY below its stream): it may go again, even a POST.
  virtual bool unprocessed() const { return false; }
  // Every request body byte since the first is still held, so a new try
  // can send the body again although it streamed.
  virtual bool holds_whole_body() const { return false; }

  // ---- the connection's protocol state (upstream/connection_state.h)
  // Before a try: `state` is what the connection carries (null for a new
  // one). True when the codec can use that connection (it then owns the
  // state); false leaves `state` alone and the connection is not for it.
  virtual bool adopt_connection(std::unique_ptr<upstream::ConnectionState>& state) { return state == nullptr; }
  // After a reusable response: the state the connection keeps while idle.
  virtual std::unique_ptr<upstream::ConnectionState> detach_connection() { return nullptr; }
};

}  // namespace torii::handlers
