// The floor programs' event loop: epoll, nothing else. Each registered
// descriptor points at a Handler; objects that close are freed at the end
// of the turn, so an event later in the same batch never reaches freed
// memory.
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace floor_bench {

class Handler {
 public:
  virtual ~Handler() = default;
  virtual void on_event(uint32_t events) = 0;
};

class Loop {
 public:
  Loop();
  // Edge-triggered unless `level`; registered once for the descriptor's life.
  void add(int fd, Handler* h, uint32_t events, bool level = false);
  // Frees `h` at the end of this turn (its descriptors must be closed already).
  void retire(Handler* h) { retired_.emplace_back(h); }
  [[noreturn]] void run();

 private:
  int epfd_;
  std::vector<std::unique_ptr<Handler>> retired_;
};

}  // namespace floor_bench
