// The lookup structure of a geo {} block: the address space cut into
// disjoint ranges, each with a value, found by binary search. Built once
// at config load by painting networks and ranges over the space (a
// network painted after a wider one wins inside it, so CIDR entries
// painted widest first give the longest-prefix match); frozen into one
// sorted array so a lookup touches log2(ranges) cache lines and no
// pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace torii::geo {

using Key = unsigned __int128;  // an IPv4 or IPv6 address as a number

class RangeTable {
 public:
  static constexpr int32_t kNone = -1;  // no entry: the default value

  // [lo, hi] (inclusive) takes `value` (kNone clears it).
  void paint(Key lo, Key hi, int32_t value);
  // Ends building: lookups work from here on.
  void freeze();
  int32_t find(Key key) const;
  size_t ranges() const { return starts_.size(); }

 private:
  std::map<Key, int32_t> building_{{Key(0), kNone}};  // range start -> value, until freeze
  std::vector<Key> starts_;
  std::vector<int32_t> values_;
};

}  // namespace torii::geo
