// libFuzzer target for the image filter's probe (modules/image_filter/
// probe): any bytes as a response body. The format is told from the first
// bytes only, and the dimensions read from the header never look past the
// body's end (ASan would say) nor claim a size for a body with no format.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "modules/image_filter/probe.h"

namespace image = torii::image_filter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const image::ImageType type = image::sniff(body);
  if (size < 16 && type != image::ImageType::none) std::abort();
  const image::Dimensions d = image::read_dimensions(type, body);
  if (type == image::ImageType::none && d.known) std::abort();
  if (d.known && (d.width == 0 || d.height == 0)) std::abort();
  // Every format reads its header against the whole body, and each of
  // them again on a body cut short.
  for (auto t : {image::ImageType::jpeg, image::ImageType::gif, image::ImageType::png, image::ImageType::webp}) {
    image::read_dimensions(t, body);
    image::read_dimensions(t, body.substr(0, size / 2));
  }
  return 0;
}
