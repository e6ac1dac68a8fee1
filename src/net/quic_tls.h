// TLS for QUIC: GnuTLS, which ngtcp2's crypto glue drives (ngtcp2_crypto_gnutls).
// The certificates are the same PEM files the OpenSSL context reads for
// TLS over TCP; they are loaded once, at config load, and shared by every
// worker (GnuTLS credentials are read-only once built).
#pragma once

#include <gnutls/gnutls.h>

#include <memory>
#include <string_view>

#include "core/result.h"

namespace torii::config {
struct SslServerConfig;
}

namespace torii::net {

// Errors read "FILE:LINE: cannot load certificate ...", naming the directive.
Result<std::shared_ptr<gnutls_certificate_credentials_st>> build_quic_credentials(const config::SslServerConfig& s);

// The master key GnuTLS derives its session-ticket keys from (64 bytes),
// or null when ssl_session_tickets is off. With ssl_session_ticket_key
// files it is a hash of the first file, so every worker, every reload and
// every machine given the same file resumes the same tickets; without one,
// one random key per process (tickets survive reloads, not restarts).
Result<std::shared_ptr<const std::string>> build_quic_ticket_key(const config::SslServerConfig& s);

// The anti-replay check GnuTLS runs on early data: within its time window,
// each ticket brings early data once per process (net/tls_replay_guard,
// shared with TLS over TCP); a replay falls back to a full 1-RTT request.
gnutls_anti_replay_t quic_anti_replay();

// QUIC is TLS 1.3 only (RFC 9001 4.2); the AEADs QUIC defines packet
// protection for; no middlebox compatibility mode (RFC 9001 8.4).
constexpr const char* kQuicPriority =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM:"
    "%DISABLE_TLS13_COMPAT_MODE";

// "h3" in the form GnuTLS's ALPN takes.
constexpr std::string_view kAlpnH3 = "h3";
// HTTP/0.9 over QUIC, the interoperability tests' protocol (`http3_hq on`).
constexpr std::string_view kAlpnHq = "hq-interop";

}  // namespace torii::net
