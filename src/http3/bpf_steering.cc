#include "http3/bpf_steering.h"

#include <linux/bpf.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "log/error_log.h"

#ifndef SO_ATTACH_REUSEPORT_EBPF
#define SO_ATTACH_REUSEPORT_EBPF 52
#endif
#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF 68
#endif

namespace torii::http3 {

namespace {

// ---- a few eBPF instructions, written by hand (no compiler for BPF here) --------

constexpr bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  return bpf_insn{code, dst, src, off, imm};
}
constexpr bpf_insn mov_reg(uint8_t dst, uint8_t src) { return insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0); }
constexpr bpf_insn mov_imm(uint8_t dst, int32_t imm) { return insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm); }
constexpr bpf_insn add_imm(uint8_t dst, int32_t imm) { return insn(BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm); }
constexpr bpf_insn and_imm(uint8_t dst, int32_t imm) { return insn(BPF_ALU64 | BPF_AND | BPF_K, dst, 0, 0, imm); }
constexpr bpf_insn load_byte(uint8_t dst, uint8_t src, int16_t off) {
  return insn(BPF_LDX | BPF_B | BPF_MEM, dst, src, off, 0);
}
constexpr bpf_insn store_word(uint8_t dst, uint8_t src, int16_t off) {
  return insn(BPF_STX | BPF_W | BPF_MEM, dst, src, off, 0);
}
constexpr bpf_insn jump_if_not(uint8_t reg, int32_t imm, int16_t skip) {
  return insn(BPF_JMP | BPF_JNE | BPF_K, reg, 0, skip, imm);
}
constexpr bpf_insn call(int32_t helper) { return insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper); }
constexpr bpf_insn exit_insn() { return insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

constexpr uint8_t R0 = 0, R1 = 1, R2 = 2, R3 = 3, R4 = 4, R6 = 6, R10 = 10;
constexpr int32_t kSkPass = 1;  // SK_PASS: no choice made here falls back to the 4-tuple hash

// The program, for one map. The context points at the UDP header.
std::vector<bpf_insn> steering_program(int map_fd) {
  constexpr int16_t kFirstBytes = -8;  // stack: the QUIC first byte and the DCID's first byte
  constexpr int16_t kKey = -16;        // stack: the map key (u32 worker index)
  std::vector<bpf_insn> p = {
      mov_reg(R6, R1),  // keep the context
      // bpf_skb_load_bytes(ctx, 8, fp-8, 2): two bytes after the 8-byte UDP header.
      mov_imm(R2, 8),
      mov_reg(R3, R10),
      add_imm(R3, kFirstBytes),
      mov_imm(R4, 2),
      call(BPF_FUNC_skb_load_bytes),
      jump_if_not(R0, 0, 12),  // too short for QUIC: the hash decides
      load_byte(R2, R10, kFirstBytes),
      and_imm(R2, 0x80),
      jump_if_not(R2, 0, 9),  // a long header (handshake): the hash decides
      // A short header: the DCID starts right after the first byte; its
      // first byte names the worker.
      load_byte(R2, R10, kFirstBytes + 1),
      store_word(R10, R2, kKey),
      mov_reg(R1, R6),
      // r2 = the map (a 16-byte load that the kernel resolves from the fd)
      insn(BPF_LD | BPF_DW | BPF_IMM, R2, BPF_PSEUDO_MAP_FD, 0, map_fd),
      insn(0, 0, 0, 0, 0),
      mov_reg(R3, R10),
      add_imm(R3, kKey),
      mov_imm(R4, 0),
      // bpf_sk_select_reuseport(ctx, map, &key, 0); an empty slot leaves the hash to choose
      call(BPF_FUNC_sk_select_reuseport),
      mov_imm(R0, kSkPass),
      exit_insn(),
  };
  return p;
}

long bpf(int cmd, bpf_attr& attr) { return syscall(__NR_bpf, cmd, &attr, sizeof attr); }

int create_map(uint32_t entries) {
  bpf_attr attr{};
  attr.map_type = BPF_MAP_TYPE_REUSEPORT_SOCKARRAY;
  attr.key_size = sizeof(uint32_t);
  attr.value_size = sizeof(uint64_t);  // a socket's descriptor
  attr.max_entries = entries;
  return int(bpf(BPF_MAP_CREATE, attr));
}

int load_program(int map_fd) {
  const std::vector<bpf_insn> program = steering_program(map_fd);
  static const char kLicense[] = "GPL";
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
  attr.insns = reinterpret_cast<uint64_t>(program.data());
  attr.insn_cnt = uint32_t(program.size());
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  return int(bpf(BPF_PROG_LOAD, attr));
}

struct Steering {
  int map_fd = -1;
  int prog_fd = -1;
  uint32_t entries = 0;
  bool warned = false;
};

std::mutex g_mu;
std::unordered_map<std::string, Steering> g_by_address;  // for the process's life

bool refuse(Steering& s, const std::string& address_key, const char* what) {
  const int err = errno;
  if (!s.warned) {
    TORII_LOG(warn, "quic_bpf: %s failed (%d: %s) for %s; QUIC datagrams of moved clients are handed between "
              "workers instead", what, err, strerror(err), address_key.c_str());
    s.warned = true;
  }
  return false;
}

}  // namespace

bool steer_by_connection_id(const std::string& address_key, int fd, size_t index, size_t workers) {
  std::lock_guard lock(g_mu);
  Steering& s = g_by_address[address_key];
  if (s.prog_fd < 0) {
    if (s.warned) return false;  // refused before: not asked again for every worker
    s.entries = uint32_t(std::max(workers, index + 1));
    s.map_fd = create_map(s.entries);
    if (s.map_fd < 0) return refuse(s, address_key, "bpf(BPF_MAP_CREATE)");
    s.prog_fd = load_program(s.map_fd);
    if (s.prog_fd < 0) {
      refuse(s, address_key, "bpf(BPF_PROG_LOAD)");
      close(s.map_fd);
      s.map_fd = -1;
      return false;
    }
  }
  if (index >= s.entries) {
    errno = ERANGE;
    return refuse(s, address_key, "the worker index");
  }
  // The slot takes this socket: after a reload that reopened the address,
  // the new socket replaces the closed one (which the kernel had removed).
  const uint32_t key = uint32_t(index);
  const uint64_t value = uint64_t(fd);
  bpf_attr attr{};
  attr.map_fd = uint32_t(s.map_fd);
  attr.key = reinterpret_cast<uint64_t>(&key);
  attr.value = reinterpret_cast<uint64_t>(&value);
  attr.flags = BPF_ANY;
  if (bpf(BPF_MAP_UPDATE_ELEM, attr) != 0) return refuse(s, address_key, "bpf(BPF_MAP_UPDATE_ELEM)");
  // The program belongs to the reuseport group: attaching it through each
  // socket is harmless, and covers a group whose first socket has closed.
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &s.prog_fd, sizeof s.prog_fd) != 0)
    return refuse(s, address_key, "setsockopt(SO_ATTACH_REUSEPORT_EBPF)");
  return true;
}

void stop_steering(int fd) {
  int unused = 0;
  // ENOENT when nothing was attached: nothing to undo.
  setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &unused, sizeof unused);
}

}  // namespace torii::http3
