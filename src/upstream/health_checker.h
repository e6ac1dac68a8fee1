// The process's one active health checker: a thread of its own that probes
// the servers of every upstream {} with a health_check, each at its
// interval, and writes each server's verdict into the group's PeerHealth,
// which every worker's balancer reads. One prober for the process, however
// many workers, so a backend sees one probe per interval, not N.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "config/config.h"

namespace torii::upstream {

class HealthChecker {
 public:
  HealthChecker();
  ~HealthChecker();  // stops the thread

  // From the main thread, at start and before every reload reaches the
  // workers: the groups of `cfg` are probed from now on. A server the old
  // config had (same group name and address) keeps its verdict, so a
  // reload neither revives a dead server nor drops a live one.
  void use_config(const std::shared_ptr<const config::Config>& cfg);
  void stop();

  // One target's streaks and verdict; public for the unit test.
  struct Verdict {
    bool up = true;
    unsigned passes = 0;  // consecutive passed probes while down
    unsigned fails = 0;   // consecutive failed probes while up
    // A probe's result; true when the server changed state.
    bool record(bool passed, unsigned need_fails, unsigned need_passes);
  };

 private:
  struct Target;
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const config::Config> pending_;  // guarded by mu_
  bool changed_ = false;                           // guarded by mu_
  bool stopping_ = false;                          // guarded by mu_
  int wake_fd_ = -1;                               // an eventfd that breaks the thread's poll()
  std::thread thread_;
};

}  // namespace torii::upstream
