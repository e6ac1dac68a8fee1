#include "net/tls_counters.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>

namespace torii::net {

namespace {

constexpr size_t kOutcomes = size_t(TlsOutcome::count_);
constexpr size_t kSlots = 256;  // threads with a slot of their own; the rest share the last one

struct alignas(64) Slot {
  std::atomic<uint64_t> values[kOutcomes];
};

Slot g_slots[kSlots];
std::atomic<size_t> g_used{0};

}  // namespace

void count_tls_handshake(TlsOutcome outcome) {
  thread_local Slot* slot = nullptr;
  thread_local bool shared = false;
  if (!slot) {
    const size_t i = g_used.fetch_add(1, std::memory_order_relaxed);
    shared = i >= kSlots - 1;
    slot = &g_slots[shared ? kSlots - 1 : i];
  }
  auto& v = slot->values[size_t(outcome)];
  if (shared) {
    v.fetch_add(1, std::memory_order_relaxed);
  } else {
    v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // one writer
  }
}

TlsOutcome tls_failure_from_openssl() {
  const unsigned long e = ERR_peek_error();
  if (ERR_GET_LIB(e) != ERR_LIB_SSL) return TlsOutcome::protocol_error;
  switch (ERR_GET_REASON(e)) {
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_VERSION_TOO_HIGH:
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
      return TlsOutcome::protocol_version;
    case SSL_R_NO_SHARED_CIPHER:
    case SSL_R_NO_SHARED_GROUPS:
    case SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM:
      return TlsOutcome::no_shared_cipher;
    case SSL_R_NO_APPLICATION_PROTOCOL:
      return TlsOutcome::no_alpn;
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return TlsOutcome::client_certificate;
    default:
      return TlsOutcome::protocol_error;
  }
}

std::array<uint64_t, size_t(TlsOutcome::count_)> tls_handshake_totals() {
  std::array<uint64_t, kOutcomes> sum{};
  const size_t used = std::min(g_used.load(std::memory_order_relaxed), kSlots);
  for (size_t s = 0; s < used; ++s)
    for (size_t c = 0; c < kOutcomes; ++c) sum[c] += g_slots[s].values[c].load(std::memory_order_relaxed);
  return sum;
}

}  // namespace torii::net
