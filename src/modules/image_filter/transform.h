// The image work proper, by libgd: decode, resize or crop (keeping the
// aspect ratio), rotate, sharpen, encode again in the same format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/image_filter_config.h"
#include "modules/image_filter/probe.h"

namespace torii::image_filter {

struct Transform {
  config::ImageFilterConfig::Filter filter = config::ImageFilterConfig::Filter::resize;
  uint64_t max_width = 0;   // resize, crop
  uint64_t max_height = 0;
  unsigned angle = 0;       // 0, 90, 180, 270
  bool force = false;       // re-encode even when nothing changes
  int jpeg_quality = 75;
  int webp_quality = 80;
  int sharpen = 0;
  bool transparency = true;
  bool interlace = false;
};

struct Transformed {
  bool as_is = false;  // the image already fits: send the original bytes
  std::string bytes;   // else the new image
  const char* error = nullptr;  // libgd's step that failed (nothing to send)
};

Transformed transform(ImageType type, std::string_view image, const Transform& t);

}  // namespace torii::image_filter
