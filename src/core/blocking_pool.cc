#include "core/blocking_pool.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>

#include "core/event_loop.h"

namespace torii::core {

namespace {

// Where a result goes back to: the loop of the thread that asked, until
// that thread ends (its thread_local owner closes the box first, so a
// late result never reaches a destroyed loop).
struct Mailbox {
  std::mutex mu;
  EventLoop* loop = nullptr;  // guarded by mu; null once the loop's thread ended
  void deliver(std::function<void()> fn) {
    std::lock_guard lock(mu);
    if (loop) loop->post(std::move(fn));
  }
};

struct MailboxOwner {
  std::shared_ptr<Mailbox> box;
  ~MailboxOwner() {
    if (!box) return;
    std::lock_guard lock(box->mu);
    box->loop = nullptr;
  }
};

std::shared_ptr<Mailbox> mailbox_for(EventLoop& loop) {
  thread_local MailboxOwner owner;
  if (!owner.box) {
    owner.box = std::make_shared<Mailbox>();
    owner.box->loop = &loop;
  }
  return owner.box;
}

}  // namespace

BlockingPool& BlockingPool::process() {
  static BlockingPool* pool = new BlockingPool();  // lives as long as the process
  return *pool;
}

BlockingPool::BlockingPool() {
  // Enough to keep every core busy with hashes, at most four: this is for
  // the rare slow job, not a second request path.
  const unsigned n = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  // The pool's threads take no signals (main waits for them in sigwaitinfo).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  for (unsigned i = 0; i < n; ++i) {
    threads_.emplace_back([this] { serve(); });
    threads_.back().detach();
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void BlockingPool::run(EventLoop& loop, std::function<void()> work, std::function<void()> done) {
  auto box = mailbox_for(loop);
  {
    std::lock_guard lock(mu_);
    jobs_.push_back([box, work = std::move(work), done = std::move(done)]() mutable {
      work();
      box->deliver(std::move(done));
    });
  }
  cv_.notify_one();
}

void BlockingPool::serve() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return !jobs_.empty(); });
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace torii::core
