// The image filter's directives (nginx's ngx_http_image_filter_module):
// image_filter (location), image_filter_jpeg_quality,
// image_filter_webp_quality, image_filter_sharpen,
// image_filter_transparency, image_filter_interlace, image_filter_buffer.
// `image_filter` sets what the filter does as a whole (its width, height
// and angle go with it); the others inherit one by one.
#include <memory>
#include <string>

#include "config/directives.h"
#include "config/image_filter_config.h"
#include "core/quote.h"

namespace torii::config {

namespace {

using Filter = ImageFilterConfig::Filter;

ImageFilterConfig& edit(Scope& s) {
  auto c = s.settings->image_filter ? std::make_shared<ImageFilterConfig>(*s.settings->image_filter)
                                    : std::make_shared<ImageFilterConfig>();
  ImageFilterConfig* raw = c.get();
  s.settings->image_filter = std::move(c);
  return *raw;
}

// nginx's reading of a number: "-" is no limit, a positive integer itself,
// anything else 0.
uint64_t image_number(std::string_view text) {
  if (text == "-") return ImageFilterValue::kNoLimit;
  uint64_t v = 0;
  return parse_number(text, v) ? v : 0;
}

// A value that may hold variables; a constant one is read now and must
// pass `valid`.
template <typename Valid>
Result<ImageFilterValue> read_value(const Node& n, const std::string& text, Valid valid) {
  ImageFilterValue v;
  if (text.find('$') != std::string::npos) {
    auto t = compile_template(text);
    if (!t) return node_error(n, t.error());
    v.dynamic = std::move(*t);
    return v;
  }
  v.number = image_number(text);
  if (!valid(text, v.number)) return node_error(n, "invalid parameter " + q(text));
  return v;
}

Status set_image_filter(Compiler&, Scope& s, const Node& n) {
  ImageFilterConfig& c = edit(s);
  // A second line in the same block adds a rotation to a resize or crop;
  // in a nested block the line starts afresh.
  const bool first_here = !s.image_filter_here;
  s.image_filter_here = true;
  if (first_here) {
    c.filter = Filter::off;
    c.width = c.height = c.angle = {};
  }
  const std::string& what = n.args[0];
  if (n.args.size() == 1) {
    if (what == "off") c.filter = Filter::off;
    else if (what == "test") c.filter = Filter::test;
    else if (what == "size") c.filter = Filter::size;
    else return node_error(n, "invalid parameter " + q(what));
    return Ok{};
  }
  if (n.args.size() == 2) {
    if (what != "rotate") return node_error(n, "invalid parameter " + q(what));
    auto angle = read_value(n, n.args[1], [](const std::string&, uint64_t a) { return a == 90 || a == 180 || a == 270; });
    if (!angle) return Error{angle.error()};
    if (c.filter != Filter::resize && c.filter != Filter::crop) c.filter = Filter::rotate;
    c.angle = std::move(*angle);
    return Ok{};
  }
  if (what == "resize") c.filter = Filter::resize;
  else if (what == "crop") c.filter = Filter::crop;
  else return node_error(n, "invalid parameter " + q(what));
  auto positive = [](const std::string&, uint64_t v) { return v > 0; };
  auto width = read_value(n, n.args[1], positive);
  if (!width) return Error{width.error()};
  auto height = read_value(n, n.args[2], positive);
  if (!height) return Error{height.error()};
  c.width = std::move(*width);
  c.height = std::move(*height);
  return Ok{};
}

template <ImageFilterValue ImageFilterConfig::*Field, bool ZeroAllowed>
Status set_number(Compiler&, Scope& s, const Node& n) {
  auto v = read_value(n, n.args[0], [](const std::string& text, uint64_t v) {
    return v != ImageFilterValue::kNoLimit && (v > 0 || (ZeroAllowed && text == "0"));
  });
  if (!v) return node_error(n, "invalid value " + q(n.args[0]));
  edit(s).*Field = std::move(*v);
  return Ok{};
}

template <bool ImageFilterConfig::*Field>
Status set_flag(Compiler&, Scope& s, const Node& n) {
  edit(s).*Field = n.args[0] == "on";
  return Ok{};
}

Status set_buffer(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return invalid_value(n, n.args[0]);
  edit(s).buffer_size = size_t(v);
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

const DirectiveSpec kImageFilterDirectives[] = {
    {"image_filter", kLocation, kArgs1 | kArgs2 | kArgs3, false, false, kMain, &set_image_filter},
    {"image_filter_jpeg_quality", kHSL, kArgs1, true, false, kMain,
     &set_number<&ImageFilterConfig::jpeg_quality, false>},
    {"image_filter_webp_quality", kHSL, kArgs1, true, false, kMain,
     &set_number<&ImageFilterConfig::webp_quality, false>},
    {"image_filter_sharpen", kHSL, kArgs1, true, false, kMain, &set_number<&ImageFilterConfig::sharpen, true>},
    {"image_filter_transparency", kHSL, kFlag, true, false, kMain, &set_flag<&ImageFilterConfig::transparency>},
    {"image_filter_interlace", kHSL, kFlag, true, false, kMain, &set_flag<&ImageFilterConfig::interlace>},
    {"image_filter_buffer", kHSL, kArgs1, true, false, kMain, &set_buffer},
};

}  // namespace

std::span<const DirectiveSpec> image_filter_directives() { return kImageFilterDirectives; }

}  // namespace torii::config
