// What an image filter needs to know before decoding: the format, told by
// its first bytes, and the dimensions its header states (so `size` and an
// image already small enough cost no decoding), read the way nginx's
// filter reads them. For JPEG also how many bytes the APPn segments (EXIF,
// XMP...) take: an image made mostly of them is re-encoded even when small
// enough.
#pragma once

#include <cstdint>
#include <string_view>

namespace torii::image_filter {

enum class ImageType : uint8_t { none, jpeg, gif, png, webp };

// "image/jpeg"... ("" for none).
std::string_view mime_type(ImageType t);
// "jpeg"... as `size` reports it.
std::string_view type_name(ImageType t);

// The format from the body's first bytes (at least 16 needed).
ImageType sniff(std::string_view head);

struct Dimensions {
  bool known = false;  // the header states both, non-zero
  uint32_t width = 0;
  uint32_t height = 0;
  uint64_t app_bytes = 0;  // JPEG: the APPn segments' lengths
};
Dimensions read_dimensions(ImageType t, std::string_view image);

}  // namespace torii::image_filter
