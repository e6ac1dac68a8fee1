// proxy_store and its kin (fastcgi_store, uwsgi_store, scgi_store), as
// nginx's ngx_http_upstream_store: the body of a 200 response is written,
// as it streams to the client, into a new file in the module's temp path.
// Once complete (the upstream's Content-Length, when it gave one, reached)
// the file takes *_store_access and the upstream's Last-Modified and is
// renamed to root + URI (`on`) or to the rendered *_store path, with the
// missing folders made. A response cut short, a failed write or a session
// that ends any other way leaves no file behind.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace torii::http {
class Exchange;
}
namespace torii::config {
struct ProxyConfig;
}
namespace torii::http1 {
struct ParsedResponse;
}

namespace torii::handlers {

class ResponseStore {
 public:
  // Null unless `cfg` stores and the response is a 200 whose body is read.
  static std::unique_ptr<ResponseStore> begin(const http::Exchange& ex, const config::ProxyConfig& cfg,
                                              const http1::ParsedResponse& r);
  ~ResponseStore();
  ResponseStore(const ResponseStore&) = delete;
  ResponseStore& operator=(const ResponseStore&) = delete;

  void on_body(std::string_view data);
  // The upstream finished the body: the file goes into place.
  void commit(http::Exchange& ex);

 private:
  ResponseStore(const config::ProxyConfig& cfg, int fd, std::string temp, int64_t length, int64_t mtime);
  const config::ProxyConfig& cfg_;
  int fd_;
  std::string temp_;         // empty once renamed or removed
  int64_t expected_ = -1;    // the upstream's Content-Length
  int64_t written_ = 0;
  int64_t mtime_ = -1;       // the upstream's Last-Modified, seconds
  bool failed_ = false;
};

}  // namespace torii::handlers
