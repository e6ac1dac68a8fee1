// image_filter and its image_filter_* settings (nginx's
// ngx_http_image_filter_module, Debian's libnginx-mod-http-image-filter):
// JPEG, GIF, PNG and WebP responses resized, cropped or rotated by libgd,
// their size reported as JSON, or checked to be images at all.
#pragma once

#include <cstdint>

#include "config/template.h"

namespace torii::config {

// A number written in the config, or a template rendered per request
// (nginx's "-" is "no limit": kNoLimit).
struct ImageFilterValue {
  static constexpr uint64_t kNoLimit = UINT64_MAX;
  uint64_t number = 0;
  Template dynamic;  // not empty: rendered per request
};

struct ImageFilterConfig {
  enum class Filter : uint8_t { off, test, size, resize, crop, rotate };
  Filter filter = Filter::off;
  ImageFilterValue width, height, angle;
  ImageFilterValue jpeg_quality{75, {}};  // libjpeg's default
  ImageFilterValue webp_quality{80, {}};  // libwebp's default
  ImageFilterValue sharpen{0, {}};        // percent
  bool transparency = true;
  bool interlace = false;
  size_t buffer_size = 1024 * 1024;
};

}  // namespace torii::config
