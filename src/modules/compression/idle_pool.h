// A few idle codec states kept per thread for reuse.
//
// A codec state owns large buffers (zlib's deflate ~256 KB, a zstd context
// more). Made and freed for every response, that memory is faulted in,
// zeroed and handed back to the kernel each time: on a proxied 20 KB page
// the page faults, the heap trim's madvise and the TLB shootdowns it sends
// to the other worker threads cost more than the compression itself. The
// libraries can reset a state and keep its buffers.
#pragma once

#include <cstddef>
#include <vector>

namespace torii::compression {

template <typename T, void (*Destroy)(T*), size_t kMaxIdle = 8>
class IdlePool {
 public:
  // Removes and returns the most recently kept state `matches` accepts, or
  // null. The caller resets it.
  template <typename Match>
  static T* take(Match matches) {
    if (gone_) return nullptr;
    auto& idle = list().idle;
    for (size_t i = idle.size(); i-- > 0;) {
      if (!matches(*idle[i])) continue;
      T* t = idle[i];
      idle.erase(idle.begin() + long(i));
      return t;
    }
    return nullptr;
  }

  // Keeps `t` (already reset) for a later take, or destroys it when enough
  // are kept or this thread's pool is gone.
  static void give(T* t) {
    if (gone_ || list().idle.size() >= kMaxIdle) {
      Destroy(t);
      return;
    }
    list().idle.push_back(t);
  }

 private:
  struct List {
    std::vector<T*> idle;
    ~List() {
      gone_ = true;  // a state released later in the thread's exit is destroyed
      for (T* t : idle) Destroy(t);
    }
  };
  static List& list() {
    thread_local List l;
    return l;
  }
  static inline thread_local bool gone_ = false;
};

}  // namespace torii::compression
