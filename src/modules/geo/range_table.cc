#include "modules/geo/range_table.h"

#include <algorithm>
#include <iterator>

namespace torii::geo {

void RangeTable::paint(Key lo, Key hi, int32_t value) {
  if (hi < lo) return;
  const Key kMax = ~Key(0);
  if (hi != kMax) {
    // What follows the range keeps its value.
    auto after = std::prev(building_.upper_bound(hi + 1));
    int32_t next_value = after->second;
    building_.erase(building_.upper_bound(lo), building_.upper_bound(hi + 1));
    building_[hi + 1] = next_value;
  } else {
    building_.erase(building_.upper_bound(lo), building_.end());
  }
  building_[lo] = value;
}

void RangeTable::freeze() {
  starts_.clear();
  values_.clear();
  for (const auto& [start, value] : building_) {
    if (!values_.empty() && values_.back() == value) continue;  // merge equal neighbours
    starts_.push_back(start);
    values_.push_back(value);
  }
  building_.clear();
}

int32_t RangeTable::find(Key key) const {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), key);
  if (it == starts_.begin()) return kNone;
  return values_[static_cast<size_t>(std::prev(it) - starts_.begin())];
}

}  // namespace torii::geo
