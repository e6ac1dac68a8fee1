// The state of one limit_conn_zone: how many requests in progress each key
// has, shared by every worker thread. Sharded like limit_req's table (a
// mutex per shard); an entry lives while its count is above zero, and the
// zone's size bounds the entries as nginx's slab does: when a shard's
// share is full a new key is refused ("could not allocate node").
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

class ConnTable {
 public:
  static std::shared_ptr<ConnTable> acquire(const std::string& name, size_t size);

  ConnTable(std::string name, size_t size);
  ~ConnTable();
  ConnTable(const ConnTable&) = delete;
  ConnTable& operator=(const ConnTable&) = delete;

  enum class Outcome : uint8_t { counted, over, no_memory };
  struct Hold {
    void* node = nullptr;
    uint32_t shard = 0;
  };
  // Counts one more request for `key` unless it already has `limit`.
  Outcome add(std::string_view key, uint32_t limit, Hold& hold);
  // The request ended: one less (the entry goes at zero).
  void remove(Hold hold);

  const std::string& name() const { return name_; }
  size_t size() const { return size_; }
  size_t entries() const;
  static size_t entry_cost(size_t key_len);

 private:
  struct Node;
  struct Shard;
  std::string name_;
  size_t size_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace torii::limits
