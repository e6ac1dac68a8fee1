// ssl_preread's reader (ngx_stream_ssl_preread_module): the server name,
// the ALPN protocols and the version a TLS ClientHello offers, read from
// the bytes a client sent first, without terminating TLS. A pure function
// over what has arrived so far: the session calls it again as more comes,
// and every length is checked against the message's own, so a hostile
// hello can only be refused, never read past.
#pragma once

#include <string>
#include <string_view>

namespace torii::stream {

struct ClientHelloInfo {
  std::string server_name;  // the first host_name of the SNI extension, as sent
  std::string protocol;     // "TLSv1.2", "TLSv1.3" (supported_versions), "SSLv2"...; empty when unknown
  std::string alpn;         // the offered protocols, comma-separated
};

enum class HelloResult : uint8_t {
  need_more,  // a record or the message is not whole yet
  done,       // `out` is filled
  not_hello,  // not TLS, not a ClientHello, or malformed: nginx declines (variables not found)
};

HelloResult parse_client_hello(std::string_view bytes, ClientHelloInfo& out);

}  // namespace torii::stream
