#include "upstream/group_state.h"

#include <netinet/in.h>
#include <strings.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <string>

namespace torii::upstream {

namespace {

constexpr int kHashTries = 21;          // points or rehashes tried before round robin (nginx: tries > 20)
constexpr int kPointsPerWeight = 160;   // consistent hash ring points per weight unit

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

}  // namespace

uint32_t crc32(std::string_view data, uint32_t crc) {
  crc = ~crc;
  for (unsigned char c : data) crc = kCrcTable[(crc ^ c) & 0xff] ^ (crc >> 8);
  return ~crc;
}

GroupState::GroupState(const config::UpstreamGroupConfig& cfg)
    : cfg_(cfg),
      rng_(uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) | 1) {
  peers_.resize(cfg.servers.size());
  for (size_t i = 0; i < cfg.servers.size(); ++i) {
    const auto& s = cfg.servers[i];
    peers_[i].weight = int(s.weight);
    peers_[i].effective_weight = int(s.weight);
    if (!s.backup) {
      total_primary_weight_ += int(s.weight);
      ++primaries_;
    }
  }
  single_ = cfg.servers.size() == 1;
  if (cfg.stats)
    for (const auto& s : cfg.servers) stats_.push_back(&cfg.stats->at(s.id));
  if (cfg.balancer == config::UpstreamGroupConfig::Balancer::hash && cfg.consistent) build_ring();
}

// nginx's points, which Cache::Memcached::Fast shares: per weight unit 160
// of crc32(HOST \0 PORT PREV), PREV the previous point's four bytes, little
// endian; HOST and PORT as the server line wrote them. Sorted, and of equal
// points the first kept. A point names the written address, so servers one
// name resolved to share its points.
void GroupState::build_ring() {
  std::vector<std::pair<uint32_t, int>> points;
  for (size_t i = 0; i < cfg_.servers.size(); ++i) {
    const auto& s = cfg_.servers[i];
    const std::string_view written = s.written.empty() ? std::string_view(s.name) : std::string_view(s.written);
    std::string base;
    if (written.size() >= 5 && strncasecmp(written.data(), "unix:", 5) == 0) {
      base = std::string(written.substr(5)) + '\0';
    } else if (const size_t colon = written.find_last_not_of("0123456789");
               colon != std::string_view::npos && written[colon] == ':') {  // HOST:PORT
      base = std::string(written.substr(0, colon)) + '\0' + std::string(written.substr(colon + 1));
    } else {
      base = std::string(written) + '\0';  // no port written
    }
    uint32_t prev = 0;
    for (unsigned j = 0; j < s.weight * kPointsPerWeight; ++j) {
      std::string point = base;
      for (int b = 0; b < 4; ++b) point.push_back(char((prev >> (8 * b)) & 0xff));
      prev = crc32(point);
      points.emplace_back(prev, int(i));
    }
  }
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& p : points)
    if (ring_.empty() || ring_.back().first != p.first) ring_.push_back(p);
}

bool GroupState::available(int i, int64_t now_ms) const {
  const auto& s = cfg_.servers[size_t(i)];
  const Peer& p = peers_[size_t(i)];
  if (s.down || s.drain) return false;
  // The active check's verdict (health_check), shared by every worker.
  if (cfg_.health && !cfg_.health->up(size_t(i))) return false;
  if (s.max_conns && p.conns >= s.max_conns) return false;
  if (!single_ && s.max_fails && p.fails >= s.max_fails && now_ms - p.checked_ms < s.fail_timeout.count() &&
      !revived_since(i, p.checked_ms))
    return false;
  return true;
}

void GroupState::failed(int peer, int64_t now_ms) {
  if (single_) return;
  Peer& p = peers_[size_t(peer)];
  const auto& s = cfg_.servers[size_t(peer)];
  if (revived_since(peer, p.checked_ms)) p.fails = 0;  // failures from before the check brought it back
  ++p.fails;
  if (PeerStats* st = stats_of(peer)) st->fails.fetch_add(1, std::memory_order_relaxed);
  p.checked_ms = now_ms;
  if (s.max_fails) {
    p.effective_weight -= std::max(1, p.weight / int(s.max_fails));
    if (p.effective_weight < 0) p.effective_weight = 0;
  }
}

void GroupState::succeeded(int peer) {
  Peer& p = peers_[size_t(peer)];
  p.fails = 0;
}

int GroupState::pick(const PickInput& in, const std::vector<uint8_t>& tried, int64_t now_ms) {
  using B = config::UpstreamGroupConfig::Balancer;
  int found = -1;
  switch (cfg_.balancer) {
    case B::round_robin:
      found = pick_rr(tried, now_ms, false, false);
      if (found < 0) found = pick_rr(tried, now_ms, true, false);
      return found;
    case B::least_conn:
      found = pick_rr(tried, now_ms, false, true);
      if (found < 0) found = pick_rr(tried, now_ms, true, true);
      return found;
    case B::ip_hash:
      return pick_ip_hash(in, tried, now_ms);
    case B::hash:
      return cfg_.consistent ? pick_consistent(in.hash_key, tried, now_ms) : pick_hash(in, tried, now_ms);
    case B::random:
      return pick_random(tried, now_ms);
  }
  return -1;
}

int GroupState::pick_rr(const std::vector<uint8_t>& tried, int64_t now_ms, bool backup, bool least_conn) {
  const int n = int(peers_.size());
  // least_conn: only the servers with the fewest connections per weight take part.
  int least = -1;
  if (least_conn) {
    for (int i = 0; i < n; ++i) {
      if (cfg_.servers[size_t(i)].backup != backup || !usable(i, tried, now_ms)) continue;
      if (least < 0 || uint64_t(peers_[size_t(i)].conns) * uint64_t(peers_[size_t(least)].weight) <
                           uint64_t(peers_[size_t(least)].conns) * uint64_t(peers_[size_t(i)].weight))
        least = i;
    }
    if (least < 0) return -1;
  }
  int best = -1;
  int total = 0;
  for (int i = 0; i < n; ++i) {
    if (cfg_.servers[size_t(i)].backup != backup || !usable(i, tried, now_ms)) continue;
    Peer& p = peers_[size_t(i)];
    if (least_conn && uint64_t(p.conns) * uint64_t(peers_[size_t(least)].weight) !=
                          uint64_t(peers_[size_t(least)].conns) * uint64_t(p.weight))
      continue;
    p.current_weight += p.effective_weight;
    total += p.effective_weight;
    if (p.effective_weight < p.weight) ++p.effective_weight;  // recovers after failures
    if (best < 0 || p.current_weight > peers_[size_t(best)].current_weight) best = i;
  }
  if (best >= 0) peers_[size_t(best)].current_weight -= total;
  return best;
}

// Maps a hash onto the primaries by weight: a server with weight 2 owns
// twice the share of the hash space.
int GroupState::pick_weighted_hash(uint32_t hash, const std::vector<uint8_t>& tried, int64_t now_ms) const {
  if (total_primary_weight_ <= 0) return -1;
  int w = int(hash % uint32_t(total_primary_weight_));
  for (size_t i = 0; i < peers_.size(); ++i) {
    if (cfg_.servers[i].backup) continue;
    w -= peers_[i].weight;
    if (w < 0) return usable(int(i), tried, now_ms) ? int(i) : -1;
  }
  return -1;
}

// nginx's, compatible with Cache::Memcached: the n-th try adds
// (crc32([n] KEY) >> 16) & 0x7fff to the sum of the earlier ones ("n"
// in decimal, left out of the first) and maps the sum onto the weights.
// An empty key or a single server: round robin, as nginx.
int GroupState::pick_hash(const PickInput& in, const std::vector<uint8_t>& tried, int64_t now_ms) {
  if (in.hash_key.empty() || total_primary_weight_ <= 0 || primaries_ < 2) return pick_rr(tried, now_ms, false, false);
  uint32_t sum = 0;
  for (int t = 0; t < kHashTries; ++t) {
    const uint32_t h = t == 0 ? crc32(in.hash_key) : crc32(std::to_string(t) + std::string(in.hash_key));
    sum += (h >> 16) & 0x7fff;
    int p = pick_weighted_hash(sum, tried, now_ms);
    if (p >= 0) return p;
  }
  return pick_rr(tried, now_ms, false, false);
}

int GroupState::pick_ip_hash(const PickInput& in, const std::vector<uint8_t>& tried, int64_t now_ms) {
  // IPv4: the first three octets, so a /24 sticks to one server; IPv6: all.
  uint8_t addr[16] = {};
  size_t len = 0;
  if (in.client && in.client->ss_family == AF_INET) {
    std::memcpy(addr, &reinterpret_cast<const sockaddr_in*>(in.client)->sin_addr, 4);
    len = 3;
  } else if (in.client && in.client->ss_family == AF_INET6) {
    const auto& a6 = reinterpret_cast<const sockaddr_in6*>(in.client)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
      std::memcpy(addr, &a6.s6_addr[12], 4);
      len = 3;
    } else {
      std::memcpy(addr, &a6, 16);
      len = 16;
    }
  }
  uint32_t h = 89;
  for (int t = 0; t < kHashTries; ++t) {
    for (size_t i = 0; i < len; ++i) h = (h * 113 + addr[i]) % 6271;
    int p = pick_weighted_hash(h, tried, now_ms);
    if (p >= 0) return p;
  }
  return pick_rr(tried, now_ms, false, false);
}

// From the first point at or past crc32(KEY), as nginx: a point's address
// (of the usable servers written with it, the smooth weighted choice),
// else the next point, up to kHashTries of them, then round robin.
int GroupState::pick_consistent(std::string_view key, const std::vector<uint8_t>& tried, int64_t now_ms) {
  if (ring_.empty() || key.empty() || primaries_ < 2) return pick_rr(tried, now_ms, false, false);
  const uint32_t h = crc32(key);
  const size_t start = size_t(std::lower_bound(ring_.begin(), ring_.end(), std::make_pair(h, -1)) - ring_.begin());
  for (int t = 0; t < kHashTries; ++t) {
    const auto& owner = cfg_.servers[size_t(ring_[(start + size_t(t)) % ring_.size()].second)];
    const std::string& address = owner.written.empty() ? owner.name : owner.written;
    int best = -1;
    int total = 0;
    for (size_t i = 0; i < cfg_.servers.size(); ++i) {
      const auto& s = cfg_.servers[i];
      if ((s.written.empty() ? s.name : s.written) != address || !usable(int(i), tried, now_ms)) continue;
      Peer& p = peers_[i];
      p.current_weight += p.effective_weight;
      total += p.effective_weight;
      if (best < 0 || p.current_weight > peers_[size_t(best)].current_weight) best = int(i);
    }
    if (best >= 0) {
      peers_[size_t(best)].current_weight -= total;
      return best;
    }
  }
  return pick_rr(tried, now_ms, false, false);
}

uint64_t GroupState::next_random() {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return rng_;
}

int GroupState::pick_random(const std::vector<uint8_t>& tried, int64_t now_ms) {
  auto one = [&](int exclude) {
    int total = 0;
    for (size_t i = 0; i < peers_.size(); ++i)
      if (int(i) != exclude && usable(int(i), tried, now_ms)) total += peers_[i].weight;
    if (total == 0) return -1;
    int w = int(next_random() % uint64_t(total));
    for (size_t i = 0; i < peers_.size(); ++i) {
      if (int(i) == exclude || !usable(int(i), tried, now_ms)) continue;
      w -= peers_[i].weight;
      if (w < 0) return int(i);
    }
    return -1;
  };
  int a = one(-1);
  if (a < 0 || !cfg_.random_two) return a;
  int b = one(a);
  if (b < 0) return a;
  // The less loaded of the two, per unit of weight.
  const Peer& pa = peers_[size_t(a)];
  const Peer& pb = peers_[size_t(b)];
  return uint64_t(pb.conns) * uint64_t(pa.weight) < uint64_t(pa.conns) * uint64_t(pb.weight) ? b : a;
}

}  // namespace torii::upstream
