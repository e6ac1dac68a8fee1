// QUIC events for the metrics page, summed over the process: datagrams a
// worker handed to the worker owning their connection (a client that moved
// to another address; with quic_bpf on the kernel steers those itself),
// and handshakes by outcome. Relaxed atomic adds: each happens at most once
// per connection or per moved datagram, never per packet of a connection
// that stays where it is.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace torii::http3 {

enum class QuicEvent : uint8_t {
  datagram_handed,      // read by one worker, handed to the owner
  handshake_completed,  // the QUIC (TLS 1.3) handshake finished
  handshake_failed,     // the connection ended before it did
  count_,
};

void count(QuicEvent e);
uint64_t total(QuicEvent e);

}  // namespace torii::http3
