// The state of one limit_req_zone: a leaky bucket per key, shared by every
// worker thread. The table is split into shards by the key's hash, each
// with its own mutex, entry index and least-recently-used list, so threads
// only meet when two keys fall into the same shard at the same moment, and
// then for a hash lookup and a few multiplications. The zone's size bounds
// the entries as nginx's slab does (a cost per entry, see entry_cost());
// each shard owns an equal share of it, so a shard can fill a little
// before the whole zone would, and then drops its own oldest entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace torii::limits {

class ReqTable {
 public:
  // The table of zone `name` with `size` bytes, the same object for as long
  // as some config holds it: a reload that keeps a zone's name and size
  // keeps its state, as nginx's shared memory does.
  static std::shared_ptr<ReqTable> acquire(const std::string& name, size_t size);

  ReqTable(std::string name, size_t size);
  ~ReqTable();
  ReqTable(const ReqTable&) = delete;
  ReqTable& operator=(const ReqTable&) = delete;

  // nginx's outcomes of a lookup: the request is accounted (passed),
  // its entry is held for a later limit to decide (held: not last of the
  // location's limits), over the burst (busy), or no room for a new
  // entry even after dropping the oldest (no_memory: "could not allocate node").
  enum class Outcome : uint8_t { passed, held, busy, no_memory };
  struct Hold {
    void* node = nullptr;
    uint32_t shard = 0;
  };
  struct Lookup {
    Outcome outcome = Outcome::passed;
    uint64_t excess = 0;  // milli-requests, for the log line and the delay
    Hold hold;            // when held
  };
  Lookup lookup(std::string_view key, uint64_t rate, uint64_t burst, bool account, int64_t now_ms);
  // Accounts a request whose entry `lookup` held; returns its excess.
  uint64_t account(Hold hold, uint64_t rate, int64_t now_ms);
  // Lets go of a held entry without accounting (a later limit refused).
  void release(Hold hold);

  const std::string& name() const { return name_; }
  size_t size() const { return size_; }
  size_t entries() const;
  // Bytes one entry costs against the zone's size: nginx's node with the
  // key, rounded up to its slab's power of two (64 bytes for an address).
  static size_t entry_cost(size_t key_len);

 private:
  struct Node;
  struct Shard;
  Shard& shard_of(std::string_view key, uint32_t& index);
  // nginx's expire: n == 1 drops up to two drained entries from the tail,
  // n == 0 first drops the oldest one whatever its state.
  void expire(Shard& s, int n, uint64_t rate, int64_t now_ms);

  std::string name_;
  size_t size_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace torii::limits
