// TLS handshakes over TCP, completed and failed by reason, for the metrics
// page. Each thread writes only its own slot (a relaxed load and store: no
// lock, no read-modify-write, its own cache line); a scrape sums them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace torii::net {

enum class TlsOutcome : uint8_t {
  completed,
  peer_closed,         // the client closed or reset before finishing
  io_error,            // the socket failed
  protocol_version,    // no TLS version both sides accept
  no_shared_cipher,
  no_alpn,             // no application protocol both sides speak
  client_certificate,  // ssl_verify_client refused the certificate or its absence
  protocol_error,      // any other TLS alert or malformed handshake
  count_,
};

inline constexpr std::array<const char*, std::size_t(TlsOutcome::count_)> kTlsOutcomeNames = {
    "completed", "peer_closed", "io_error", "protocol_version", "no_shared_cipher", "no_alpn",
    "client_certificate", "protocol_error"};

void count_tls_handshake(TlsOutcome outcome);
// The outcome of a failure OpenSSL reported, from the first error queued
// (read before the queue is emptied for the log line).
TlsOutcome tls_failure_from_openssl();
std::array<uint64_t, std::size_t(TlsOutcome::count_)> tls_handshake_totals();

}  // namespace torii::net
