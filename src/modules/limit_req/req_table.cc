#include "modules/limit_req/req_table.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <map>

#include "modules/limit_req/leaky_bucket.h"

namespace torii::limits {

struct ReqTable::Node {
  std::string key;
  int64_t last = 0;
  int64_t excess = 0;
  uint32_t count = 0;  // holds by lookups still deciding; never dropped while > 0
  Node* prev = nullptr;  // towards the most recently used
  Node* next = nullptr;
};

struct ReqTable::Shard {
  std::mutex mu;
  std::unordered_map<std::string_view, std::unique_ptr<Node>> index;  // views into Node::key
  Node* head = nullptr;  // most recently used
  Node* tail = nullptr;  // least recently used
  size_t bytes = 0;
  size_t budget = 0;

  void unlink(Node* n) {
    (n->prev ? n->prev->next : head) = n->next;
    (n->next ? n->next->prev : tail) = n->prev;
    n->prev = n->next = nullptr;
  }
  void push_front(Node* n) {
    n->next = head;
    n->prev = nullptr;
    if (head) head->prev = n;
    head = n;
    if (!tail) tail = n;
  }
  void drop(Node* n) {
    unlink(n);
    bytes -= entry_cost(n->key.size());
    index.erase(std::string_view(n->key));
  }
};

namespace {

// Small zones keep one shard (exact LRU); larger ones split, one shard per
// 64 KB up to 64, so a shard holds about a thousand entries at least.
size_t shard_count(size_t size) {
  size_t n = size / (64 * 1024);
  if (n < 1) n = 1;
  if (n > 64) n = 64;
  return std::bit_floor(n);
}

std::mutex registry_mu;
std::map<std::pair<std::string, size_t>, std::weak_ptr<ReqTable>>& registry() {
  static auto* r = new std::map<std::pair<std::string, size_t>, std::weak_ptr<ReqTable>>;
  return *r;
}

}  // namespace

size_t ReqTable::entry_cost(size_t key_len) {
  // nginx's node: the rbtree links and hash (32 bytes), the bucket's
  // fields and queue links (about 40), then the key, in a slab chunk of
  // the next power of two.
  return std::bit_ceil(std::max<size_t>(64, 40 + key_len));
}

std::shared_ptr<ReqTable> ReqTable::acquire(const std::string& name, size_t size) {
  std::lock_guard lock(registry_mu);
  auto& slot = registry()[{name, size}];
  if (auto t = slot.lock()) return t;
  auto t = std::make_shared<ReqTable>(name, size);
  slot = t;
  return t;
}

ReqTable::ReqTable(std::string name, size_t size) : name_(std::move(name)), size_(size) {
  size_t n = shard_count(size);
  for (size_t i = 0; i < n; ++i) {
    shards_.push_back(std::make_unique<Shard>());
    shards_.back()->budget = size / n;
  }
}

ReqTable::~ReqTable() = default;

size_t ReqTable::entries() const {
  size_t total = 0;
  for (const auto& s : shards_) {
    std::lock_guard lock(s->mu);
    total += s->index.size();
  }
  return total;
}

ReqTable::Shard& ReqTable::shard_of(std::string_view key, uint32_t& index) {
  size_t h = std::hash<std::string_view>{}(key);
  index = static_cast<uint32_t>((h >> 7) & (shards_.size() - 1));
  return *shards_[index];
}

void ReqTable::expire(Shard& s, int n, uint64_t rate, int64_t now_ms) {
  while (n < 3) {
    Node* old = s.tail;
    if (!old || old->count) return;  // entries are bumped on lookup: nothing older is idle either
    if (n++ != 0 && !drained(old->excess, rate, now_ms - old->last)) return;
    s.drop(old);
  }
}

ReqTable::Lookup ReqTable::lookup(std::string_view key, uint64_t rate, uint64_t burst, bool account,
                                  int64_t now_ms) {
  Lookup r;
  uint32_t si = 0;
  Shard& s = shard_of(key, si);
  std::lock_guard lock(s.mu);
  if (auto it = s.index.find(key); it != s.index.end()) {
    Node* node = it->second.get();
    s.unlink(node);
    s.push_front(node);
    int64_t ms = elapsed_ms(now_ms, node->last);
    int64_t excess = excess_after(node->excess, rate, ms);
    r.excess = static_cast<uint64_t>(excess);
    if (r.excess > burst) {
      r.outcome = Outcome::busy;
      return r;
    }
    if (account) {
      node->excess = excess;
      if (ms) node->last = now_ms;
      r.outcome = Outcome::passed;
      return r;
    }
    ++node->count;
    r.outcome = Outcome::held;
    r.hold = {node, si};
    return r;
  }
  size_t cost = entry_cost(key.size());
  expire(s, 1, rate, now_ms);
  if (s.bytes + cost > s.budget) {
    expire(s, 0, rate, now_ms);
    if (s.bytes + cost > s.budget) {
      r.outcome = Outcome::no_memory;
      return r;
    }
  }
  auto node = std::make_unique<Node>();
  node->key.assign(key);
  Node* n = node.get();
  s.index.emplace(std::string_view(n->key), std::move(node));
  s.bytes += cost;
  s.push_front(n);
  if (account) {
    n->last = now_ms;
    r.outcome = Outcome::passed;
    return r;
  }
  // A held new entry starts with last = 0, as nginx's: accounting it later
  // leaks "forever" and leaves one request's worth.
  n->last = 0;
  n->count = 1;
  r.outcome = Outcome::held;
  r.hold = {n, si};
  return r;
}

uint64_t ReqTable::account(Hold hold, uint64_t rate, int64_t now_ms) {
  Shard& s = *shards_[hold.shard];
  auto* node = static_cast<Node*>(hold.node);
  std::lock_guard lock(s.mu);
  int64_t ms = elapsed_ms(now_ms, node->last);
  int64_t excess = excess_after(node->excess, rate, ms);
  if (ms) node->last = now_ms;
  node->excess = excess;
  --node->count;
  return static_cast<uint64_t>(excess);
}

void ReqTable::release(Hold hold) {
  Shard& s = *shards_[hold.shard];
  std::lock_guard lock(s.mu);
  --static_cast<Node*>(hold.node)->count;
}

}  // namespace torii::limits
