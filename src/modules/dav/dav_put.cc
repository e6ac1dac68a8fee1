// PUT as nginx's DAV module does it: the body goes to a new file in
// client_body_temp_path, which is renamed onto the target only once the
// whole body has arrived. A cut upload leaves the target as it was and
// its temporary file is removed.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "core/event_loop.h"
#include "core/temp_file.h"
#include "http/date.h"
#include "http/document_root.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "log/error_log.h"
#include "modules/dav/dav_files.h"
#include "modules/dav/dav_methods.h"
#include "modules/dav/dav_request.h"

namespace torii::dav {

namespace {

using http::Exchange;

class PutUpload final : public Exchange::HandlerState, public http::BodyReader {
 public:
  PutUpload(Exchange& ex, std::string target, std::string temp, int fd)
      : ex_(ex), target_(std::move(target)), temp_(std::move(temp)), fd_(fd) {}

  ~PutUpload() override {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());  // never renamed: the upload did not complete
  }

  bool on_body_data(std::string_view data) override {
    if (status_ != 0) return true;  // a write failed: the rest is read and dropped
    while (!data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        status_ = failed(&ex_, errno, 500, "write()", temp_);
        return true;
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  void on_body_end() override {
    if (ended_) return;
    ended_ = true;
    // Answer at the end of the turn, never inside the codec's callback.
    std::weak_ptr<char> alive = alive_;
    ex_.services().loop->defer([this, alive] {
      if (alive.expired() || ex_.finished() || ex_.head_sent()) return;
      finish();
    });
  }

 private:
  void finish() {
    if (status_ != 0) {
      http::send_error(ex_, status_);
      return;
    }
    int status = 201;
    struct stat st;
    if (::stat(target_.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        TORII_LOG_EX(ex_, error, "\"%s\" could not be created (%d: %s)%s", target_.c_str(), EISDIR, std::strerror(EISDIR),
                  http::log_context(ex_).c_str());
        http::send_error(ex_, 409);
        return;
      }
      status = 204;
    }
    const config::DavSettings& dav = ex_.settings().dav;
    RenameOptions o;
    o.mode = dav.access;
    o.folder_mode = dir_access(dav.access);
    o.create_path = dav.create_full_put_path;
    o.delete_on_failure = true;
    o.fd = fd_;
    // The client's Date becomes the file's time, as in nginx.
    if (const http::Header* date = ex_.req.find(http::HeaderToken::date)) {
      if (auto t = http::parse_http_date(date->value)) o.mtime = *t;
    }
    const bool moved = rename_file(ex_, temp_, target_, o);
    temp_.clear();  // renamed, or removed by rename_file
    files_changed(ex_);
    if (!moved) {
      http::send_error(ex_, 500);
      return;
    }
    respond(ex_, status);
  }

  Exchange& ex_;
  std::string target_;
  std::string temp_;
  int fd_;
  int status_ = 0;  // set when writing failed: the status to answer
  bool ended_ = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace

void start_put(Exchange& ex) {
  if (ex.req.path.back() == '/') {
    TORII_LOG_EX(ex, error, "cannot PUT to a collection%s", http::log_context(ex).c_str());
    http::send_error(ex, 409);
    return;
  }
  if (ex.req.find("Content-Range") != nullptr) {
    TORII_LOG_EX(ex, error, "PUT with range is unsupported%s", http::log_context(ex).c_str());
    http::send_error(ex, 501);
    return;
  }
  std::string target;
  if (!http::map_uri_to_path(ex, ex.req.path, target)) {
    http::send_error(ex, 404);
    return;
  }
  std::string temp;
  const config::LocationSettings& s = ex.settings();
  const int fd = core::create_temp_file(s.client_body_temp_path, s.client_body_temp_levels, temp);
  if (fd < 0) {
    TORII_LOG_EX(ex, crit, "open() \"%s\" failed (%d: %s)%s", temp.c_str(), errno, std::strerror(errno), http::log_context(ex).c_str());
    http::send_error(ex, 500);
    return;
  }
  auto upload = std::make_unique<PutUpload>(ex, std::move(target), std::move(temp), fd);
  PutUpload* raw = upload.get();
  ex.handler_state = std::move(upload);
  ex.read_body(raw);
}

}  // namespace torii::dav
