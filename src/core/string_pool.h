// Per-thread reuse of the small string buffers a keep-alive connection
// takes and lets go of on every request: the buffer a request head is read
// into and the one its response head is written into. An idle connection
// holds neither (its memory is the point of keep-alive limits), so without
// a pool each request made and freed both, and with a hundred connections
// answered per loop turn the frees overflowed glibc's per-thread cache into
// its slower bins. Blocks up to kMaxCapacity wait here for the next request
// on any connection of the thread; drain_recycled_blocks() (the worker
// went quiet) gives them back to malloc. Under AddressSanitizer nothing is
// kept, so a use after the give is still caught.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/recycled.h"

namespace torii::core {

class StringPool {
 public:
  static constexpr size_t kKeep = 128;
  static constexpr size_t kMaxCapacity = 4096;

  // An empty string holding a kept buffer when there is one.
  static std::string take() {
#if TORII_RECYCLE_BLOCKS
    auto& kept = stock();
    if (!kept.empty()) {
      std::string s = std::move(kept.back());
      kept.pop_back();
      return s;
    }
#endif
    return {};
  }

  // Leaves `s` empty with no buffer; the buffer waits for take() if it is
  // one worth keeping.
  static void give(std::string& s) {
#if TORII_RECYCLE_BLOCKS
    constexpr size_t kInline = std::string().capacity();  // no heap block below this
    auto& kept = stock();
    if (s.capacity() > kInline && s.capacity() <= kMaxCapacity && kept.size() < kKeep) {
      s.clear();
      kept.push_back(std::move(s));
    }
#endif
    std::string().swap(s);
  }

 private:
  static void drain() { std::vector<std::string>().swap(stock()); }
  static std::vector<std::string>& stock() {
    thread_local std::vector<std::string> kept = [] {
      recycled_detail::drains().push_back(&StringPool::drain);
      return std::vector<std::string>();
    }();
    return kept;
  }
};

}  // namespace torii::core
