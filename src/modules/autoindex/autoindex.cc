#include "modules/autoindex/autoindex.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "config/autoindex_config.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "modules/autoindex/listing.h"

namespace torii::autoindex {

namespace {

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};

// nginx's $arg_callback: the first "callback=" argument, as received.
std::string_view callback_arg(std::string_view q) {
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    if (pair.starts_with("callback=")) return pair.substr(9);
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return {};
}

int64_t local_utc_offset() {
  time_t now = time(nullptr);
  struct tm tm {};
  localtime_r(&now, &tm);
  return tm.tm_gmtoff;
}

}  // namespace

handlers::HandlerResult serve(http::Exchange& ex, const std::string& dir) {
  using handlers::HandlerResult;
  const config::AutoindexConfig& cfg = *ex.settings().autoindex;
  ListingOptions options;
  options.format = cfg.format;
  options.exact_size = cfg.exact_size;
  options.uri = ex.req.path;
  if (cfg.localtime) options.utc_offset_sec = local_utc_offset();
  if (cfg.format == config::AutoindexConfig::Format::jsonp) {
    options.callback = callback_arg(ex.req.query);
    if (!valid_callback(options.callback)) {
      TORII_LOG_EX(ex, info, "client sent %s callback name: \"%.*s\"%s",
                options.callback.size() > 128 ? "too long" : "invalid", static_cast<int>(options.callback.size()),
                options.callback.data(), http::log_context(ex).c_str());
      return HandlerResult::error(400);
    }
    if (options.callback.empty()) options.format = config::AutoindexConfig::Format::json;
  }

  std::unique_ptr<DIR, DirCloser> d(opendir(dir.c_str()));
  if (!d) {
    int err = errno;
    bool missing = err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG;
    if (missing || err == EACCES)
      TORII_LOG_EX(ex, error, "opendir() \"%s\" failed (%d: %s)%s", dir.c_str(), err, strerror(err),
                http::log_context(ex).c_str());
    else
      TORII_LOG_EX(ex, crit, "opendir() \"%s\" failed (%d: %s)%s", dir.c_str(), err, strerror(err),
                http::log_context(ex).c_str());
    return HandlerResult::error(missing ? 404 : err == EACCES ? 403 : 500);
  }
  std::vector<Entry> entries;
  int dfd = dirfd(d.get());
  while (dirent* de = readdir(d.get())) {
    if (de->d_name[0] == '.') continue;  // hidden files, "." and ".."
    struct stat st {};
    if (fstatat(dfd, de->d_name, &st, 0) != 0) {
      int err = errno;
      // A dangling symlink is listed as itself.
      if ((err != ENOENT && err != ELOOP) || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        TORII_LOG_EX(ex, crit, "stat() \"%s%s\" failed (%d: %s)%s", dir.c_str(), de->d_name, err, strerror(err),
                  http::log_context(ex).c_str());
        if (err == EACCES) continue;
        return HandlerResult::error(500);
      }
    }
    Entry e;
    e.name = de->d_name;
    e.dir = S_ISDIR(st.st_mode);
    e.file = S_ISREG(st.st_mode);
    e.mtime = st.st_mtime;
    e.size = st.st_size;
    entries.push_back(std::move(e));
  }
  sort_entries(entries);
  std::string body = render_listing(entries, options);

  http::ResponseHead head;
  head.status = 200;
  switch (options.format) {
    case config::AutoindexConfig::Format::json: head.add("Content-Type", "application/json"); break;
    case config::AutoindexConfig::Format::jsonp: head.add("Content-Type", "application/javascript"); break;
    case config::AutoindexConfig::Format::xml: head.add("Content-Type", "text/xml; charset=utf-8"); break;
    case config::AutoindexConfig::Format::html: head.add("Content-Type", "text/html"); break;
  }
  head.content_length = static_cast<int64_t>(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
  return HandlerResult::done();
}

}  // namespace torii::autoindex
