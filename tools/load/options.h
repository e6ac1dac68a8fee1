// The command line of torii-load, parsed and checked before anything starts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "load/url.h"

namespace torii::load {

enum class Protocol : uint8_t {
  automatic,  // http:// is HTTP/1.1; https:// takes what ALPN picks (h2 first)
  h1,
  h2,  // h2c with prior knowledge over http://, ALPN "h2" over https://
  h3,  // HTTP/3 over QUIC (https:// only)
  hq,  // HTTP/0.9 over QUIC, the hq-interop ALPN (https:// only; GET, no headers, no status)
};
// Both run over QUIC (QuicConnection, H3Session).
inline bool over_quic(Protocol p) { return p == Protocol::h3 || p == Protocol::hq; }

struct Options {
  unsigned connections = 10;
  unsigned streams = 1;  // concurrent streams per connection (h2, h3), pipeline depth (h1)
  unsigned threads = 1;
  int64_t duration_ns = 10'000'000'000;  // used when requests == 0
  uint64_t requests = 0;                 // -n: exactly this many, then stop
  double rate = 0;                       // --rate: open loop, requests per second
  Protocol protocol = Protocol::automatic;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string method = "GET";
  std::string body_file;
  bool connect_per_request = false;
  bool tls_resume = true;
  int64_t timeout_ns = 10'000'000'000;
  std::string json_file;
  std::string save_dir;  // --save: each response body to DIR/N
  std::vector<Url> urls;
  bool help = false;
};

// Parses argv (without checking that files exist). A usage error is an Error
// whose message says what is wrong.
Result<Options> parse_options(int argc, char** argv);

// "10" (seconds), "10s", "500ms", "2m", "1h" -> nanoseconds.
Result<int64_t> parse_duration(const std::string& text);

extern const char* const kUsage;

}  // namespace torii::load
