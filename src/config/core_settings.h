// nginx http-core directives that tune a client connection or a detail of
// a response, kept together so LocationSettings carries them as one member
// (directives_core_extra.cc sets them; they merge down like the rest).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace torii::config {

struct CoreSettings {
  // keepalive_time: a connection open this long ends after the request in
  // progress (HTTP/1: Connection: close; HTTP/2: GOAWAY).
  std::chrono::milliseconds keepalive_time{3'600'000};
  // keepalive_disable: browsers that get no keep-alive (nginx's msie6 and
  // safari User-Agent rules, http/user_agent_quirks.h).
  enum KeepaliveDisable : uint8_t { kMsie6 = 1 << 0, kSafari = 1 << 1 };
  uint8_t keepalive_disable = kMsie6;
  // lingering_close: whether a closing connection reads and drops what the
  // client still sends (on: when it may have sent more; always; off: close
  // at once), for at most lingering_time, waiting lingering_timeout for
  // each read.
  enum class LingeringClose : uint8_t { off, on, always };
  LingeringClose lingering_close = LingeringClose::on;
  std::chrono::milliseconds lingering_time{30'000};
  std::chrono::milliseconds lingering_timeout{5'000};
  // chunked_transfer_encoding off: an HTTP/1.1 response of unknown length
  // ends by closing the connection instead.
  bool chunked_transfer_encoding = true;
  // if_modified_since: how If-Modified-Since is compared with a response's
  // Last-Modified (off: ignored; exact: equal; before: not newer).
  enum class IfModifiedSince : uint8_t { off, exact, before };
  IfModifiedSince if_modified_since = IfModifiedSince::exact;
  // max_ranges: 0 turns byte ranges off; a request with more ranges than
  // this gets the whole response.
  uint32_t max_ranges = std::numeric_limits<uint32_t>::max();
  // auth_delay: a 401 from the access phase waits this long (modules/access/auth_delay).
  std::chrono::milliseconds auth_delay{0};
  // keepalive_min_timeout: an idle HTTP/1 keep-alive connection is not
  // closed to free its descriptor or for a graceful stop until it has
  // waited this long for its next request (nginx 1.27.4).
  std::chrono::milliseconds keepalive_min_timeout{0};
  // client_body_in_file_only: a buffered request body goes to a named file
  // under client_body_temp_path whatever its size; `on` keeps the file
  // after the request, `clean` removes it (handlers/request_body_buffer).
  enum class BodyInFileOnly : uint8_t { off, on, clean };
  BodyInFileOnly client_body_in_file_only = BodyInFileOnly::off;
  // subrequest_output_buffer_size: the most of a subrequest's response kept
  // in memory (SSI `include set=`); nginx's default is a memory page.
  size_t subrequest_output_buffer_size = 4096;
};

}  // namespace torii::config
