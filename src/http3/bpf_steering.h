// `quic_bpf on`: the kernel itself delivers a short-header QUIC datagram to
// the socket of the worker that owns its connection. Every worker has its
// own SO_REUSEPORT UDP socket per address; a reuseport eBPF program
// (BPF_PROG_TYPE_SK_REUSEPORT) reads the first byte of the destination
// connection ID (our IDs start with the owning worker's index) and picks
// that worker's socket from a BPF_MAP_TYPE_REUSEPORT_SOCKARRAY indexed by
// worker. Long-header packets (handshakes) and IDs no worker has a socket
// for take the kernel's usual 4-tuple hash. A client that changed address
// then needs no hand-over between workers (Worker::hand_quic_datagram).
//
// Where the kernel refuses (no CAP_BPF / CAP_NET_ADMIN, an old kernel,
// seccomp), a warning goes to the error log and the hand-over queue does
// the work, as with quic_bpf off.
#pragma once

#include <cstddef>
#include <string>

namespace torii::http3 {

// Puts `fd`, worker `index`'s socket for `address_key`, in that address's
// map (made on first use, sized for `workers`) and attaches the program to
// the sockets' reuseport group. False: the kernel refused (logged once per
// address); datagrams are then handed over between workers instead.
bool steer_by_connection_id(const std::string& address_key, int fd, size_t index, size_t workers);

// quic_bpf off after a reload: the group takes the kernel's hash again.
void stop_steering(int fd);

}  // namespace torii::http3
