#include "handlers/upstream_store.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

#include "config/proxy_config.h"
#include "handlers/open_file_cache.h"
#include "core/ascii.h"
#include "core/temp_file.h"
#include "http/date.h"
#include "http/document_root.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/variables.h"
#include "http1/response_parser.h"
#include "log/error_log.h"
#include "modules/dav/dav_files.h"

namespace torii::handlers {

std::unique_ptr<ResponseStore> ResponseStore::begin(const http::Exchange& ex, const config::ProxyConfig& cfg,
                                                    const http1::ParsedResponse& r) {
  if (cfg.store == config::ProxyConfig::Store::off || r.status != 200) return nullptr;
  std::string temp;
  const int fd = core::create_temp_file(cfg.temp_path, cfg.temp_levels, temp);
  if (fd < 0) {
    const int err = errno;
    TORII_LOG_EX(ex, crit, "open() \"%s\" failed (%d: %s)%s", temp.c_str(), err, std::strerror(err),
              http::log_context(ex).c_str());
    return nullptr;
  }
  int64_t mtime = -1;
  for (const auto& h : r.headers) {
    if (!core::iequals(h.name, "last-modified")) continue;
    if (auto t = http::parse_http_date(h.value)) mtime = *t;
    break;
  }
  return std::unique_ptr<ResponseStore>(new ResponseStore(cfg, fd, std::move(temp), r.content_length, mtime));
}

ResponseStore::ResponseStore(const config::ProxyConfig& cfg, int fd, std::string temp, int64_t length, int64_t mtime)
    : cfg_(cfg), fd_(fd), temp_(std::move(temp)), expected_(length), mtime_(mtime) {}

ResponseStore::~ResponseStore() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());  // never renamed: the response did not complete
}

void ResponseStore::on_body(std::string_view data) {
  if (failed_) return;
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      TORII_LOG(crit, "write() \"%s\" failed (%d: %s)", temp_.c_str(), errno, std::strerror(errno));
      failed_ = true;
      return;
    }
    written_ += n;
    data.remove_prefix(size_t(n));
  }
}

void ResponseStore::commit(http::Exchange& ex) {
  if (failed_ || (expected_ >= 0 && expected_ != written_)) return;
  std::string path;
  if (cfg_.store == config::ProxyConfig::Store::on) {
    if (!http::map_uri_to_path(ex, ex.req.path, path)) return;
  } else {
    http::render(cfg_.store_path, ex, path);
  }
  if (path.empty()) return;
  dav::RenameOptions o;
  o.mode = cfg_.store_access;
  o.folder_mode = dav::dir_access(cfg_.store_access);
  o.mtime = mtime_;
  o.fd = fd_;
  o.create_path = true;
  o.delete_on_failure = true;
  dav::rename_file(ex, temp_, path, o);  // logs its own failure
  temp_.clear();  // renamed, or removed by rename_file
  // A static request later in this loop turn opens the stored file afresh.
  if (OpenFileCache* files = ex.services().open_files) files->forget_this_turn();
}

}  // namespace torii::handlers
