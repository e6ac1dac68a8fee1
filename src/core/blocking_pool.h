// A few threads for work that would stall an event loop (a bcrypt check
// costs a fifth of a second here): the loop hands a job over and gets its
// result back as a function posted to it, and meanwhile serves its other
// connections.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace torii::core {

class EventLoop;

class BlockingPool {
 public:
  static BlockingPool& process();

  // From `loop`'s own thread: runs `work` on a pool thread, then `done` on
  // the loop's thread. When that thread has ended meanwhile (shutdown),
  // `done` is dropped unrun. `done` must check that what it resumes still
  // exists: the request may have gone while `work` ran.
  void run(EventLoop& loop, std::function<void()> work, std::function<void()> done);

  size_t threads() const { return threads_.size(); }

 private:
  BlockingPool();
  void serve();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  std::vector<std::thread> threads_;        // detached: they live as long as the process
};

}  // namespace torii::core
