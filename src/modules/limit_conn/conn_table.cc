#include "modules/limit_conn/conn_table.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <map>

namespace torii::limits {

struct ConnTable::Node {
  std::string key;
  uint32_t conn = 0;
};

struct ConnTable::Shard {
  std::mutex mu;
  std::unordered_map<std::string_view, std::unique_ptr<Node>> index;  // views into Node::key
  size_t bytes = 0;
  size_t budget = 0;
};

namespace {

size_t shard_count(size_t size) {
  size_t n = size / (64 * 1024);
  return std::bit_floor(std::clamp<size_t>(n, 1, 64));
}

std::mutex registry_mu;
std::map<std::pair<std::string, size_t>, std::weak_ptr<ConnTable>>& registry() {
  static auto* r = new std::map<std::pair<std::string, size_t>, std::weak_ptr<ConnTable>>;
  return *r;
}

}  // namespace

size_t ConnTable::entry_cost(size_t key_len) {
  // nginx's node: the rbtree links and hash (32 bytes), the count and the
  // key's length (about 8), the key, in a power-of-two slab chunk.
  return std::bit_ceil(std::max<size_t>(32, 40 + key_len));
}

std::shared_ptr<ConnTable> ConnTable::acquire(const std::string& name, size_t size) {
  std::lock_guard lock(registry_mu);
  auto& slot = registry()[{name, size}];
  if (auto t = slot.lock()) return t;
  auto t = std::make_shared<ConnTable>(name, size);
  slot = t;
  return t;
}

ConnTable::ConnTable(std::string name, size_t size) : name_(std::move(name)), size_(size) {
  size_t n = shard_count(size);
  for (size_t i = 0; i < n; ++i) {
    shards_.push_back(std::make_unique<Shard>());
    shards_.back()->budget = size / n;
  }
}

ConnTable::~ConnTable() = default;

size_t ConnTable::entries() const {
  size_t total = 0;
  for (const auto& s : shards_) {
    std::lock_guard lock(s->mu);
    total += s->index.size();
  }
  return total;
}

ConnTable::Outcome ConnTable::add(std::string_view key, uint32_t limit, Hold& hold) {
  size_t h = std::hash<std::string_view>{}(key);
  uint32_t si = static_cast<uint32_t>((h >> 7) & (shards_.size() - 1));
  Shard& s = *shards_[si];
  std::lock_guard lock(s.mu);
  if (auto it = s.index.find(key); it != s.index.end()) {
    Node* n = it->second.get();
    if (n->conn >= limit) return Outcome::over;
    ++n->conn;
    hold = {n, si};
    return Outcome::counted;
  }
  size_t cost = entry_cost(key.size());
  if (s.bytes + cost > s.budget) return Outcome::no_memory;
  auto node = std::make_unique<Node>();
  node->key.assign(key);
  node->conn = 1;
  hold = {node.get(), si};
  s.index.emplace(std::string_view(node->key), std::move(node));
  s.bytes += cost;
  return Outcome::counted;
}

void ConnTable::remove(Hold hold) {
  Shard& s = *shards_[hold.shard];
  auto* n = static_cast<Node*>(hold.node);
  std::lock_guard lock(s.mu);
  if (--n->conn == 0) {
    s.bytes -= entry_cost(n->key.size());
    s.index.erase(std::string_view(n->key));
  }
}

}  // namespace torii::limits
