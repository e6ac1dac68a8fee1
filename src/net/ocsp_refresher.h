// The process's OCSP fetcher: a thread of its own that asks each staple's
// responder for the certificate's status (HTTP POST, a 10 s bound), checks
// the answer as nginx does (successful, signed by a trusted responder when
// ssl_stapling_verify is on, the certificate "good", within its validity)
// and stores it in the staple. A worker never waits for a responder.
//
// Schedule, as nginx's: a good response is fetched again five minutes
// before its nextUpdate, but within the hour and not sooner than five
// minutes; a failure is logged and tried again in five minutes, and the
// old response is sent until its own nextUpdate, never after.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "net/ocsp_staple.h"

namespace torii::net {

class OcspRefresher {
 public:
  static OcspRefresher& process();

  // From the config load: the staple is fetched from now on, for as long
  // as its TLS context lives. A staple for the same certificate and
  // responder that an older config already holds lends it its response.
  void add(const std::shared_ptr<OcspStaple>& staple);

  // From main: the thread runs between these (never under `torii -t`).
  void start();
  void stop();

  // One fetch and check, the response's DER and how long it holds.
  struct Fetched {
    std::string der;
    int64_t valid_until;
  };
  static Result<Fetched> fetch(const OcspStaple& staple);

 private:
  OcspRefresher() = default;
  void run();
  void refresh(OcspStaple& staple);

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::weak_ptr<OcspStaple>> staples_;  // guarded by mu_
  bool stopping_ = false;                           // guarded by mu_
  std::thread thread_;
};

}  // namespace torii::net
