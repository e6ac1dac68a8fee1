#include "modules/sub/sub_filter.h"

#include <strings.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "config/sub_filter_config.h"
#include "http/exchange.h"
#include "http/rewriting_sink.h"
#include "http/variables.h"
#include "modules/sub/sub_matcher.h"

namespace torii::sub {

namespace {

void lower_ascii(std::string& s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c | 0x20);
}

}  // namespace

class SubSink final : public http::RewritingSink {
 public:
  SubSink(http::Exchange& ex, std::vector<std::string> patterns, std::vector<const config::Template*> replacements,
          bool once)
      : RewritingSink(ex, "the sub filter"), matcher_(std::move(patterns), once),
        replacements_(std::move(replacements)), rendered_(replacements_.size()) {}

 private:
  void rewrite(std::string_view data, std::string& out) override {
    matcher_.feed(data, out, [this](size_t index, std::string& o) { o.append(replacement(index)); });
  }
  void rewrite_end(std::string& out) override { matcher_.finish(out); }

  // nginx renders a replacement when its string is first found, and keeps it.
  const std::string& replacement(size_t index) {
    auto& r = rendered_[index];
    if (!r) r = http::render(*replacements_[index], ex_);
    return *r;
  }

  Matcher matcher_;
  std::vector<const config::Template*> replacements_;  // by pattern, kept alive by the exchange's config
  std::vector<std::optional<std::string>> rendered_;
};

namespace {

bool encoded(const http::ResponseHead& head) {
  const std::string* ce = head.find("Content-Encoding");
  return ce && !ce->empty() && strcasecmp(ce->c_str(), "identity") != 0;
}

}  // namespace

bool searches(const config::LocationSettings& s, std::string_view type) {
  return s.sub_filter && !s.sub_filter->pairs.empty() && s.sub_filter->types.matches(type);
}

std::shared_ptr<SubSink> header_filter(http::Exchange& ex, http::ResponseHead& head) {
  const config::SubFilterConfig& cfg = *ex.settings().sub_filter;
  if (cfg.pairs.empty() || head.content_length == 0 || head.status == 101) return nullptr;
  const std::string* type = head.find("Content-Type");
  if (!type || !cfg.types.matches(*type)) return nullptr;
  if (encoded(head)) return nullptr;

  // Strings with variables are rendered now, once per response; one that
  // renders empty is left out (nginx's dynamic pairs).
  std::vector<std::string> patterns;
  std::vector<const config::Template*> replacements;
  for (const auto& pair : cfg.pairs) {
    std::string match;
    if (pair.match.is_constant()) {
      if (!pair.match.parts.empty()) match = pair.match.parts[0].literal;  // lower-cased at load
    } else {
      match = http::render(pair.match, ex);
      lower_ascii(match);
    }
    if (match.empty()) continue;
    patterns.push_back(std::move(match));
    replacements.push_back(&pair.replacement);
  }
  if (patterns.empty()) return nullptr;

  head.content_length = -1;
  head.remove("Content-Length");
  if (!cfg.last_modified) {
    head.remove("Last-Modified");
    head.remove("ETag");
  } else {
    http::weaken_etag(head);
  }
  if (ex.header_only) return nullptr;
  return std::make_shared<SubSink>(ex, std::move(patterns), std::move(replacements), cfg.once);
}

std::shared_ptr<http::ResponseSink> attach(std::shared_ptr<SubSink> sub, std::shared_ptr<http::ResponseSink> filter_below,
                                           http::ResponseSink& below) {
  sub->attach(std::move(filter_below), below);
  return sub;
}

}  // namespace torii::sub
