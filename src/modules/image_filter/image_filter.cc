#include "modules/image_filter/image_filter.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <cstring>

#include "config/image_filter_config.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/pipeline.h"
#include "http/variables.h"
#include "log/error_log.h"
#include "modules/image_filter/probe.h"
#include "modules/image_filter/transform.h"

namespace torii::image_filter {

namespace {

using Filter = config::ImageFilterConfig::Filter;
using Value = config::ImageFilterValue;

// A decoded image takes four bytes a pixel: one whose header states more
// pixels than this is refused rather than decoded (a small file can name
// a huge canvas).
constexpr uint64_t kMaxPixels = 50'000'000;

// nginx's reading of a value: "-" no limit, a positive number, else 0.
uint64_t value_of(const http::Exchange& ex, const Value& v) {
  if (v.dynamic.empty()) return v.number;
  const std::string text = http::render(v.dynamic, ex);
  if (text == "-") return Value::kNoLimit;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || n > UINT32_MAX) return 0;
    n = n * 10 + uint64_t(c - '0');
  }
  return n;
}

int small_value(const http::Exchange& ex, const Value& v) {
  const uint64_t n = value_of(ex, v);
  return n == Value::kNoLimit || n > 1'000'000 ? 0 : int(n);
}

class ImageSink final : public http::ResponseSink, public std::enable_shared_from_this<ImageSink> {
 public:
  ImageSink(http::Exchange& ex, const config::ImageFilterConfig& cfg, http::ResponseHead head, size_t limit,
            bool head_request)
      : ex_(ex), cfg_(cfg), head_(std::move(head)), limit_(limit), head_request_(head_request) {}

  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view data) override {
    if (done_ || data.empty()) return;
    if (data.size() > limit_ - image_.size()) return too_big();
    image_.append(data);
  }
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override {
    if (done_ || length <= 0) return;
    if (uint64_t(length) > limit_ - image_.size()) return too_big();
    if (file->has_content()) {
      image_.append(std::string_view(file->content).substr(size_t(offset), size_t(length)));
      return;
    }
    const size_t at = image_.size();
    image_.resize(at + size_t(length));
    if (!http::read_exact(file->fd, image_.data() + at, size_t(length), offset)) {
      TORII_LOG_EX(ex_, crit, "image filter: read of the file failed: %s%s", strerror(errno),
                   http::log_context(ex_).c_str());
      done_ = true;
      refuse(500);
    }
  }
  void finish() override {
    if (done_) return;
    done_ = true;
    process();
  }
  void abort() override { done_ = true; }

 private:
  void too_big() {
    done_ = true;
    TORII_LOG_EX(ex_, error, "image filter: too big response%s", http::log_context(ex_).c_str());
    refuse(415);
  }

  // The response becomes an error page; it does not pass the filter again.
  void refuse(int status) {
    auto keep = shared_from_this();
    image_.clear();
    ex_.header_only = head_request_;
    ex_.body_filter.reset();
    ex_.take_back_head();
    http::send_error(ex_, status);
  }

  // Hands the new head and body on, under the filters below this one.
  void pass_on(http::ResponseHead head, std::string_view body) {
    auto keep = shared_from_this();
    ex_.header_only = head_request_;
    ex_.body_filter.reset();
    head.content_length = int64_t(body.size());
    ex_.pass_head_on(std::move(head));
    ex_.send_body(body);
    if (ex_.body_filter) ex_.body_filter->finish();
    else ex_.finish_filtered();
  }

  void answer_size(ImageType type, const Dimensions& d) {
    http::ResponseHead head;  // nginx answers the size with a clean head
    head.status = 200;
    head.add("Content-Type", "application/json");
    char json[128];
    if (type == ImageType::none || !d.known) {
      std::snprintf(json, sizeof json, "{}\r\n");
    } else {
      const std::string name(type_name(type));
      std::snprintf(json, sizeof json, "{ \"img\" : { \"width\": %" PRIu32 ", \"height\": %" PRIu32 ", \"type\": \"%s\" } }\r\n",
                    d.width, d.height, name.c_str());
    }
    pass_on(std::move(head), json);
  }

  void process() {
    const ImageType type = sniff(image_);
    if (type == ImageType::none && cfg_.filter != Filter::size) {
      TORII_LOG_EX(ex_, info, "image filter: the response is not a JPEG, GIF, PNG or WebP image%s",
                   http::log_context(ex_).c_str());
      return refuse(415);
    }
    const Dimensions dims = read_dimensions(type, image_);
    if (cfg_.filter == Filter::size) return answer_size(type, dims);
    head_.set("Content-Type", std::string(mime_type(type)));
    if (cfg_.filter == Filter::test) return pass_on(std::move(head_), image_);

    Transform t;
    t.filter = cfg_.filter;
    t.angle = unsigned(value_of(ex_, cfg_.angle));
    if (cfg_.filter == Filter::rotate) {
      if (t.angle != 90 && t.angle != 180 && t.angle != 270) return bad_value("angle");
    } else {
      if (t.angle != 90 && t.angle != 180 && t.angle != 270) t.angle = 0;  // resize or crop without rotating
      t.max_width = value_of(ex_, cfg_.width);
      t.max_height = value_of(ex_, cfg_.height);
      if (t.max_width == 0 || t.max_height == 0) return bad_value("size");
      if (dims.known && dims.width <= t.max_width && dims.height <= t.max_height && t.angle == 0 &&
          !(type == ImageType::jpeg && image_.size() / 20 < dims.app_bytes))
        return pass_on(std::move(head_), image_);  // small enough: as it is
    }
    if (dims.known && uint64_t(dims.width) * dims.height > kMaxPixels) {
      TORII_LOG_EX(ex_, error, "image filter: image of %" PRIu32 "x%" PRIu32 " pixels is too large to decode%s",
                   dims.width, dims.height, http::log_context(ex_).c_str());
      return refuse(415);
    }
    // EXIF and the like taking more than a twentieth of a JPEG: re-encoded
    // even when small enough (nginx's rule).
    t.force = type == ImageType::jpeg && image_.size() / 20 < dims.app_bytes;
    t.jpeg_quality = small_value(ex_, cfg_.jpeg_quality);
    t.webp_quality = small_value(ex_, cfg_.webp_quality);
    t.sharpen = small_value(ex_, cfg_.sharpen);
    t.transparency = cfg_.transparency;
    t.interlace = cfg_.interlace;
    Transformed out = transform(type, image_, t);
    if (out.error) {
      TORII_LOG_EX(ex_, error, "image filter: %s%s", out.error, http::log_context(ex_).c_str());
      return refuse(415);
    }
    if (out.as_is) return pass_on(std::move(head_), image_);
    http::weaken_etag(head_);
    image_.clear();
    image_.shrink_to_fit();
    pass_on(std::move(head_), out.bytes);
  }

  void bad_value(const char* what) {
    TORII_LOG_EX(ex_, info, "image filter: no valid %s for this request%s", what, http::log_context(ex_).c_str());
    refuse(415);
  }

  http::Exchange& ex_;
  const config::ImageFilterConfig& cfg_;
  http::ResponseHead head_;
  const size_t limit_;
  const bool head_request_;  // the body came only for the filter: the client gets the head
  std::string image_;
  bool done_ = false;
};

}  // namespace

bool active(const http::Exchange& ex) {
  const auto& f = ex.settings().image_filter;
  return f && f->filter != Filter::off;
}

bool hold_head(http::Exchange& ex, http::ResponseHead& head) {
  // A HEAD gets the head the GET would (the new type and length): the
  // handler sends the body for the filter to read.
  const bool head_request = ex.req.method == http::Method::head;
  if (!active(ex) || ex.image_filter_passed || (ex.header_only && !head_request) || ex.subrequest_depth > 0 ||
      head.status == 304)
    return false;
  ex.image_filter_passed = true;
  const auto& cfg = *ex.settings().image_filter;
  if (const std::string* type = head.find("Content-Type"); type && type->starts_with("multipart/x-mixed-replace")) {
    TORII_LOG_EX(ex, error, "image filter: multipart/x-mixed-replace response%s", http::log_context(ex).c_str());
    ex.take_back_head();
    http::send_error(ex, 500);
    return true;
  }
  if (head.content_length >= 0 && uint64_t(head.content_length) > cfg.buffer_size) {
    TORII_LOG_EX(ex, error, "image filter: too big response: %" PRId64 "%s", head.content_length,
                 http::log_context(ex).c_str());
    ex.take_back_head();
    http::send_error(ex, 415);
    return true;
  }
  ex.header_only = false;
  ex.body_filter = std::make_shared<ImageSink>(ex, cfg, std::move(head), cfg.buffer_size, head_request);
  return true;
}

}  // namespace torii::image_filter
