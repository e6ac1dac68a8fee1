// What a thread counts while it runs, in fixed memory (recording never
// allocates), merged across threads at the end.
#pragma once

#include <array>
#include <cstdint>

#include "load/histogram.h"

namespace torii::load {

// Why a request failed without a response.
enum class ErrorKind : uint8_t {
  connect,   // the TCP connection could not be made
  tls,       // the TLS (or QUIC) handshake failed, or ALPN chose no usable protocol
  reset,     // the connection was reset or closed before the response was
             // complete, or the HTTP/2 or HTTP/3 stream was reset
  timeout,   // no complete response within --timeout
  protocol,  // a malformed response, or an HTTP/2, HTTP/3 or QUIC protocol error
};
constexpr size_t kErrorKinds = 5;
const char* error_kind_name(ErrorKind kind);

// The status of an HTTP/0.9 response (--hq), which has none: counted under 0, not failed.
constexpr int kNoStatus = 0;

struct Stats {
  Histogram latency;          // responses of any status
  uint64_t requests = 0;      // completed: a response, or failed with an error
  uint64_t responses = 0;
  uint64_t failed = 0;        // an error, or a status outside 200-399 (as k6)
  std::array<uint64_t, 600> status{};  // by status code, 100-599
  uint64_t status_other = 0;
  std::array<uint64_t, kErrorKinds> errors{};
  // The first message of each error kind, to show what went wrong.
  std::array<std::array<char, 120>, kErrorKinds> first_error{};
  uint64_t retried = 0;  // refused by the server before processing, sent again
  uint64_t bytes_received = 0;  // HTTP bytes (after TLS), heads and bodies
  uint64_t bytes_sent = 0;
  uint64_t connects = 0;       // connections established (TCP + TLS)
  uint64_t connects_h2 = 0;    // of which speak HTTP/2
  uint64_t connects_h3 = 0;    // QUIC connections carrying HTTP/3
  uint64_t connect_failures = 0;
  uint64_t tls_handshakes = 0;
  uint64_t tls_resumed = 0;
  uint64_t waiting_at_end = 0;  // open loop: due but never sent before the end
  double cpu_seconds = 0;       // the threads' own CPU time (user + system) while running

  void record_response(int status_code, uint64_t latency_ns);
  void record_error(ErrorKind kind, const char* detail);
  void merge(const Stats& other);
};

}  // namespace torii::load
