#include "modules/charset/charset_sink.h"

#include <string>

#include "http/rewriting_sink.h"

namespace torii::charset {

class CharsetSink final : public http::RewritingSink {
 public:
  CharsetSink(http::Exchange& ex, std::shared_ptr<const config::CharsetMap> map, Recoder::Direction direction)
      : RewritingSink(ex, "the charset filter"), map_(std::move(map)), recoder_(*map_, direction) {}

 private:
  void rewrite(std::string_view data, std::string& out) override { recoder_.feed(data, out); }
  void rewrite_end(std::string& out) override { recoder_.finish(out); }

  std::shared_ptr<const config::CharsetMap> map_;  // the recoder reads it
  Recoder recoder_;
};

std::shared_ptr<CharsetSink> make_sink(http::Exchange& ex, std::shared_ptr<const config::CharsetMap> map,
                                       Recoder::Direction direction) {
  return std::make_shared<CharsetSink>(ex, std::move(map), direction);
}

std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<CharsetSink> sink,
                                           std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below) {
  sink->attach(std::move(filter_below), below);
  return sink;
}

}  // namespace torii::charset
