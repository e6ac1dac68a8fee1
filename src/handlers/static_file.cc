#include "handlers/static_file.h"

#include <errno.h>
#include <fcntl.h>
#include <strings.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "config/autoindex_config.h"
#include "core/event_loop.h"
#include "handlers/open_file_cache.h"
#include "handlers/symlink_policy.h"
#include "http/date.h"
#include "http/document_root.h"
#include "http/etag.h"
#include "http/exchange.h"
#include "http/preconditions.h"
#include "http/range.h"
#include "http/range_response.h"
#include "http/slash_redirect.h"
#include "modules/image_filter/image_filter.h"
#include "modules/charset/charset_filter.h"
#include "modules/ssi/ssi_filter.h"
#include "modules/sub/sub_filter.h"
#include "http/special_response.h"
#include "http/variables.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "modules/autoindex/autoindex.h"
#include "modules/random_index/random_index.h"
#include "modules/compression/compression_filter.h"

namespace torii::handlers {

namespace {

using http::Exchange;
using http::HeaderToken;
using http::Method;

// ---- mapping a URI to a file name ----------------------------------------

bool map_uri(const Exchange& ex, std::string_view uri, std::string& out) { return http::map_uri_to_path(ex, uri, out); }

OpenResult open_path_unadvised(Exchange& ex, const std::string& path) {
  const config::OpenFileCache& c = ex.settings().open_file_cache;
  OpenFileCache* cache = ex.services().open_files;
  const SymlinkPolicy symlinks = symlink_policy(ex, path);
  if (cache == nullptr) return open_file(path, 0, symlinks);
  if (c.enabled) return cache->open(path, c, symlinks);
  core::EventLoop* loop = ex.services().loop;
  if (loop == nullptr) return open_file(path, 0, symlinks);
  // A whole body that will pass through memory: read it with the open
  // (not for a HEAD, a conditional or a range request, which may need none
  // of it or a part).
  const bool through_memory = ex.socket_conn().tls || ex.req.version >= 20 || !ex.settings().sendfile;
  const bool whole_body = ex.req.method == Method::get && !ex.req.find(HeaderToken::range) &&
                          !ex.req.find(HeaderToken::if_none_match) && !ex.req.find(HeaderToken::if_modified_since);
  return cache->open_this_turn(path, through_memory && whole_body, *loop, symlinks);
}

// read_ahead: nginx's hint for files past 128 KB (ngx_read_ahead on Linux).
void advise_read_ahead(const Exchange& ex, const OpenResult& r, const std::string& path) {
  constexpr int64_t kMinReadAhead = 128 * 1024;
  if (ex.settings().read_ahead <= 0 || !r.ok() || r.file->is_dir || r.file->size <= kMinReadAhead) return;
  if (int err = posix_fadvise(r.file->fd, 0, 0, POSIX_FADV_SEQUENTIAL); err != 0)
    TORII_LOG_EX(ex, crit, "posix_fadvise() \"%s\" failed (%d: %s)%s", path.c_str(), err, std::strerror(err), http::log_context(ex).c_str());
}

OpenResult open_path(Exchange& ex, const std::string& path) {
  OpenResult r = open_path_unadvised(ex, path);
  advise_read_ahead(ex, r, path);
  return r;
}

bool is_missing(int err) {
  return err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG;
}

// The status for a failed open, logged the way nginx logs it.
HandlerResult open_failed(const Exchange& ex, const std::string& path, int err) {
  if (is_missing(err)) {
    if (ex.settings().log_not_found)
      TORII_LOG_EX(ex, error, "open() \"%s\" failed (%d: %s)%s", path.c_str(), err, std::strerror(err), http::log_context(ex).c_str());
    return HandlerResult::error(404);
  }
  if (err == kErrNotRegularFile) {
    TORII_LOG_EX(ex, crit, "\"%s\" is not a regular file%s", path.c_str(), http::log_context(ex).c_str());
    return HandlerResult::error(404);
  }
  if (err == EACCES || err == EPERM || err == ELOOP || err == EMLINK) {
    TORII_LOG_EX(ex, error, "open() \"%s\" failed (%d: %s)%s", path.c_str(), err, std::strerror(err), http::log_context(ex).c_str());
    return HandlerResult::error(403);
  }
  TORII_LOG_EX(ex, crit, "open() \"%s\" failed (%d: %s)%s", path.c_str(), err, std::strerror(err), http::log_context(ex).c_str());
  return HandlerResult::error(500);
}

// ---- redirects -----------------------------------------------------------

// index's internal redirect keeps the request's arguments unless the new
// URI brings its own (try_files' and error_page's take only the URI's own).
HandlerResult redirect_with_args(const Exchange& ex, std::string uri) {
  if (ex.req.has_query && uri.find('?') == std::string::npos) {
    uri.push_back('?');
    uri.append(ex.req.query);
  }
  return HandlerResult::redirect(std::move(uri));
}

HandlerResult directory_redirect(Exchange& ex) {
  ex.response.add("Location", http::slash_redirect_location(ex));
  return HandlerResult::error(301);
}

// ---- index ---------------------------------------------------------------

HandlerResult serve_index(Exchange& ex) {
  const config::LocationSettings& s = ex.settings();
  std::string dir;
  if (!map_uri(ex, ex.req.path, dir)) return HandlerResult::error(404);
  if (dir.empty() || dir.back() != '/') dir.push_back('/');
  ex.request_filename = dir;
  if (s.random_index) {  // before the index files, as nginx's module order has it
    random_index::Pick pick = random_index::pick_file(ex, dir);
    if (pick.status != 0) return HandlerResult::error(pick.status);
    if (!pick.name.empty()) return redirect_with_args(ex, ex.req.path + pick.name);
  }

  std::string file;
  std::string rendered;
  for (size_t i = 0; i < s.index.size(); ++i) {
    // A name with variables (`index index$variant.html`) is rendered per request.
    const config::Template& name = s.index[i];
    if (!name.is_constant()) rendered = http::render(name, ex);
    const std::string& idx = name.is_constant() ? name.source : rendered;
    if (idx.empty()) continue;
    if (idx[0] == '/') {
      // An absolute index is a URI; the last one is taken without a test.
      if (i + 1 == s.index.size()) return redirect_with_args(ex, idx);
      if (!map_uri(ex, idx, file)) continue;
    } else {
      file.assign(dir);
      file.append(idx);
    }
    const OpenResult r = open_path(ex, file);
    if (!r.ok()) {
      if (r.err == ENOENT || r.err == kErrNotRegularFile) continue;
      if (r.err == ENOTDIR) break;  // the "directory" is a file: 404 below
      return open_failed(ex, file, r.err);
    }
    std::string uri = idx[0] == '/' ? idx : ex.req.path + idx;
    return redirect_with_args(ex, std::move(uri));
  }

  const OpenResult d = open_path(ex, dir);
  if (!d.ok()) return open_failed(ex, dir, d.err);
  if (!d.file->is_dir) return HandlerResult::error(404);
  if (s.autoindex && s.autoindex->enabled && (ex.req.method == Method::get || ex.req.method == Method::head))
    return autoindex::serve(ex, dir);
  TORII_LOG_EX(ex, error, "directory index of \"%s\" is forbidden%s", dir.c_str(), http::log_context(ex).c_str());
  return HandlerResult::error(403);
}

// ---- try_files -----------------------------------------------------------

// Runs try_files. Returns a result when it decided the response (the last
// entry); otherwise sets ex.req.path to the entry that exists, fills `found`
// when that entry is a file (so it isn't opened twice) and returns nullopt.
std::optional<HandlerResult> run_try_files(Exchange& ex, OpenResult& found, std::string& found_path) {
  const auto& tf = ex.settings().try_files;
  std::string name;
  std::string path;
  for (size_t i = 0; i + 1 < tf.size(); ++i) {
    name.clear();
    http::render(tf[i], ex, name);
    // As nginx: an entry written with a trailing "/" tests for a directory
    // and names it without that slash ("$uri/" tests $uri), so a directory
    // asked for without its slash is then redirected to it; any other entry
    // tests for a file, even when its value ends in "/".
    const bool want_dir = !tf[i].source.empty() && tf[i].source.back() == '/';
    if (want_dir && !name.empty()) name.pop_back();
    // Arguments in a tested entry don't name a file; nginx ignores them here.
    const size_t q = name.find('?');
    if (q != std::string::npos) name.resize(q);
    if (name.empty()) continue;
    if (!http::map_try_files_entry(ex, name, path)) continue;
    OpenResult r = open_path(ex, path);
    if (!r.ok()) {
      if (!is_missing(r.err) && r.err != kErrNotRegularFile)
        TORII_LOG_EX(ex, crit, "open() \"%s\" failed (%d: %s)%s", path.c_str(), r.err, std::strerror(r.err), http::log_context(ex).c_str());
      continue;
    }
    if (r.file->is_dir != want_dir) continue;
    if (!http::in_regex_alias_location(ex)) {
      ex.req.path = std::move(name);
    } else if (!want_dir) {
      // The entry is the URI now, found under the alias (a directory
      // entry leaves the URI as it was, as in nginx).
      ex.req.path = std::move(name);
      ex.uri_added_to_alias = ex.location;
    }
    if (!want_dir) {
      found = std::move(r);
      found_path = std::move(path);
    }
    return std::nullopt;
  }
  std::string last = http::render(tf.back(), ex);
  if (last.size() > 1 && last[0] == '=') {
    int code = 0;
    for (size_t i = 1; i < last.size() && code < 1000; ++i) {
      if (last[i] < '0' || last[i] > '9') {
        code = -1;
        break;
      }
      code = code * 10 + (last[i] - '0');
    }
    if (code >= 100 && code <= 999) return HandlerResult::error(code);
  }
  // As nginx: the fallback URI's own arguments, none if it has no "?"
  // (hence the guides' `/index.php?$args`).
  return HandlerResult::redirect(std::move(last));
}

// The body filters below will change the file's bytes (SSI, addition,
// sub_filter, a recoding to or from UTF-8, compression): its byte ranges do not
// apply to what is sent, as nginx's range filter finds no length then.
bool body_filters_change(const Exchange& ex, const http::ResponseHead& head, std::string_view type) {
  const config::LocationSettings& s = ex.settings();
  if (ex.subrequest_depth == 0 && ssi::rewrites_body(s, type)) return true;
  if (sub::searches(s, type) || charset::recoding_changes_length(ex, type)) return true;
  if (image_filter::active(ex)) return true;  // it needs the whole image
  return compression::changes_body(ex, head);
}

// ---- conditional requests --------------------------------------------------

// The value an `add_header NAME` will give the response in place of the
// file's own validator (the last such line wins; empty removes it).
std::optional<std::string> configured_validator(const Exchange& ex, const char* name) {
  std::optional<std::string> value;
  for (const auto& h : ex.settings().add_headers)
    if (h.kind == config::AddHeader::Kind::validator && strcasecmp(h.name.c_str(), name) == 0)
      value = http::render(h.value, ex);
  return value;
}

// If-Range: the range applies only while the validator still matches — a
// strong ETag, or the exact Last-Modified date — judged against the ones
// the response carries, add_header's included (as nginx's range filter
// runs after the headers filter).
bool if_range_holds(const Exchange& ex, const http::OpenFile& f, std::string_view etag) {
  const http::Header* h = ex.req.find(HeaderToken::if_range);
  if (h == nullptr) return true;
  const std::string_view v = h->value;
  if (!v.empty() && (v[0] == '"' || v.substr(0, 2) == "W/")) {
    const auto own = configured_validator(ex, "ETag");
    const std::string_view sent = own ? std::string_view(*own) : etag;
    return v[0] == '"' && v == sent;  // weak tags never match here
  }
  const auto date = http::parse_http_date(v);
  if (const auto own = configured_validator(ex, "Last-Modified")) {
    const auto sent = http::parse_http_date(*own);
    return date && sent && *date == *sent;
  }
  return date && *date == f.mtime;
}

// ---- sending -----------------------------------------------------------------

// `content_encoding`: a precompressed file (gzip_static...); `vary`: the
// response depends on Accept-Encoding.
HandlerResult serve_file(Exchange& ex, std::shared_ptr<const http::OpenFile> file,
                         std::string_view content_encoding = {}, bool vary = false) {
  const config::LocationSettings& s = ex.settings();
  const http::OpenFile& f = *file;

  char etag_buf[http::kMaxEtagLen];
  const size_t etag_len = s.etag ? http::format_etag(f.mtime, f.size, etag_buf) : 0;
  const std::string_view etag(etag_buf, etag_len);

  // An error_page that landed here goes out with the error's status (the
  // exchange applies status_override); conditionals and ranges don't apply
  // to it, as in nginx.
  const int err_status = ex.status_override > 0 ? ex.status_override : 0;

  const std::string_view date = http::cached_mtime_date(f.mtime);
  if (err_status == 0)
    if (auto answered = answer_preconditions(ex, f, etag, date)) return *answered;

  http::ResponseHead head;
  head.headers.reserve(6);

  const std::string_view type = config::mime_type(s, ex.req.path);
  head.status = err_status != 0 ? err_status : 200;
  if (!type.empty()) head.add("Content-Type", type);
  // As nginx's header filter: an error page sent with the error's status
  // goes without Last-Modified.
  if (head.status == 200) head.add("Last-Modified", date);
  if (!etag.empty()) head.add("ETag", etag);
  if (vary) head.add("Vary", "Accept-Encoding");
  if (!content_encoding.empty()) head.add("Content-Encoding", std::string(content_encoding));
  head.content_length = f.size;
  // 0: no ranges, and no Accept-Ranges: where SSI or addition rewrite the
  // body, or gzip (brotli, zstd, gunzip) will code it, as nginx's range
  // filter finds ranges turned off by the filters before it.
  const uint32_t max_ranges = body_filters_change(ex, head, type) ? 0 : s.core.max_ranges;
  if (err_status == 0 && max_ranges > 0) head.add("Accept-Ranges", "bytes");
  if (ex.req.method == Method::head) ex.header_only = true;

  // A HEAD gets the head a GET would: a 206 with the range's length, as nginx's range filter.
  const http::Header* range = err_status == 0 && max_ranges > 0 ? ex.req.find(HeaderToken::range) : nullptr;
  if (range != nullptr && if_range_holds(ex, f, etag)) {
    std::vector<http::ByteRange> ranges;
    switch (http::parse_range(range->value, f.size, ranges, http::range_limit(max_ranges))) {
      case http::RangeOutcome::ignore:
        break;
      case http::RangeOutcome::unsatisfiable:
        ex.response.add("Content-Range", "bytes */" + std::to_string(f.size));
        return HandlerResult::error(416);
      case http::RangeOutcome::ok:
        if (ranges.size() > 1) {
          http::send_multipart(ex, std::move(head), file, 0, f.size, type, ranges);
          return HandlerResult::done();
        }
        head.status = 206;
        head.add("Content-Range", http::content_range(ranges[0], f.size));
        head.content_length = ranges[0].length();
        ex.send_head(std::move(head));
        ex.send_file(std::move(file), ranges[0].start, ranges[0].length());
        ex.finish();
        return HandlerResult::done();
    }
  }

  const int64_t size = f.size;
  ex.send_head(std::move(head));
  if (!ex.header_only && size > 0) ex.send_file(std::move(file), 0, size);
  ex.finish();
  return HandlerResult::done();
}

}  // namespace

std::optional<HandlerResult> apply_try_files(Exchange& ex) {
  if (ex.settings().try_files.empty()) return std::nullopt;
  OpenResult found;
  std::string found_path;
  return run_try_files(ex, found, found_path);
}

HandlerResult serve_static(Exchange& ex) {
  if (ex.location_uri_rewritten && !ex.settings().alias.empty()) {
    // The new URI no longer starts with the location's prefix: nothing to replace.
    TORII_LOG_EX(ex, alert, "\"alias\" cannot be used in location \"%s\" where URI was rewritten%s",
              ex.location ? ex.location->pattern.c_str() : "", http::log_context(ex).c_str());
    return HandlerResult::error(500);
  }
  OpenResult opened;
  std::string opened_path;
  if (!ex.settings().try_files.empty()) {
    if (auto decided = run_try_files(ex, opened, opened_path)) return std::move(*decided);
  }

  const Method m = ex.req.method;
  // POST reaches the file lookup so a missing file still answers 404 (nginx).
  if (m != Method::get && m != Method::head && m != Method::post) return HandlerResult::error(405);
  const std::string& uri = ex.req.path;
  if (uri.find('\0') != std::string::npos) return HandlerResult::error(400);
  if (!uri.empty() && uri.back() == '/') return serve_index(ex);

  if (opened.ok()) {
    ex.request_filename = std::move(opened_path);
  } else if (!map_uri(ex, uri, ex.request_filename)) {
    return HandlerResult::error(404);
  }
  // gzip_static and the like: FILE.gz (.br, .zst) instead, when it exists.
  bool vary = false;
  if (ex.settings().compression && m != Method::post) {
    auto pre = compression::open_precompressed(ex, ex.request_filename, [&](const std::string& p) {
      OpenResult r = open_path(ex, p);
      return r.ok() && !r.file->is_dir ? r.file : nullptr;
    }, vary);
    if (pre.file) return serve_file(ex, std::move(pre.file), pre.coding, vary);
  }
  if (!opened.ok()) {
    opened = open_path(ex, ex.request_filename);
    if (!opened.ok()) return open_failed(ex, ex.request_filename, opened.err);
  }
  if (opened.file->is_dir) return directory_redirect(ex);
  if (m == Method::post) return HandlerResult::error(405);
  return serve_file(ex, std::move(opened.file), {}, vary);
}

OpenResult open_request_file(Exchange& ex, const std::string& path) { return open_path(ex, path); }

HandlerResult open_failure(const Exchange& ex, const std::string& path, int err) {
  return open_failed(ex, path, err);
}

std::optional<HandlerResult> answer_preconditions(Exchange& ex, const http::OpenFile& f, std::string_view etag,
                                                 std::string_view last_modified) {
  const int pre = http::evaluate_preconditions(ex, etag, f.mtime);
  if (pre == 412) return HandlerResult::error(412);
  if (pre != 304) return std::nullopt;
  // A 304 carries the validators but no body, length or type.
  http::ResponseHead head;
  head.status = 304;
  head.add("Last-Modified", std::string(last_modified));
  if (!etag.empty()) head.add("ETag", etag);
  ex.header_only = true;
  ex.send_head(std::move(head));
  ex.finish();
  return HandlerResult::done();
}

bool if_range_allows(const Exchange& ex, const http::OpenFile& f, std::string_view etag) {
  return if_range_holds(ex, f, etag);
}

}  // namespace torii::handlers
