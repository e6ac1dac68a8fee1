#include "modules/image_filter/probe.h"

namespace torii::image_filter {

namespace {

uint8_t at(std::string_view s, size_t i) { return static_cast<uint8_t>(s[i]); }

// Big-endian 16 bits at i.
uint32_t be16(std::string_view s, size_t i) { return uint32_t(at(s, i)) << 8 | at(s, i + 1); }

// Walks the JPEG segments from the start of image on, as nginx does (each
// 0xFF not followed by 0xFF taken as a marker with a length): the first
// SOFn marker's frame size, and the APPn segments' total length.
Dimensions jpeg(std::string_view s) {
  Dimensions d;
  if (s.size() < 12) return d;
  const size_t last = s.size() - 10;  // room for a SOF segment's size fields
  size_t p = 2;
  while (p < last) {
    if (at(s, p) == 0xff && at(s, p + 1) != 0xff) {
      const uint8_t marker = at(s, ++p);
      const bool frame = marker == 0xc0 || marker == 0xc1 || marker == 0xc2 || marker == 0xc3 || marker == 0xc9 ||
                         marker == 0xca || marker == 0xcb;
      if (frame && (d.width == 0 || d.height == 0)) {
        d.width = be16(s, p + 6);
        d.height = be16(s, p + 4);
      }
      const uint32_t len = be16(s, p + 1);
      if (marker >= 0xe1 && marker <= 0xef) d.app_bytes += len;  // application data: EXIF, XMP...
      p += len;
      continue;
    }
    p++;
  }
  d.known = d.width != 0 && d.height != 0;
  return d;
}

Dimensions webp(std::string_view s) {
  Dimensions d;
  if (s.size() < 30 || s.substr(12, 3) != "VP8") return d;
  switch (s[15]) {
    case ' ':  // lossy: the key frame's header
      if ((at(s, 20) & 1) || at(s, 23) != 0x9d || at(s, 24) != 0x01 || at(s, 25) != 0x2a) return d;
      d.width = (at(s, 26) | uint32_t(at(s, 27)) << 8) & 0x3fff;
      d.height = (at(s, 28) | uint32_t(at(s, 29)) << 8) & 0x3fff;
      break;
    case 'L':  // lossless: 14 bits each after the signature byte
      if (at(s, 20) != 0x2f) return d;
      d.width = ((at(s, 21) | uint32_t(at(s, 22)) << 8) & 0x3fff) + 1;
      d.height = ((at(s, 22) >> 6 | uint32_t(at(s, 23)) << 2 | uint32_t(at(s, 24)) << 10) & 0x3fff) + 1;
      break;
    case 'X':  // extended: the canvas size, 24 bits each, minus one
      d.width = (at(s, 24) | uint32_t(at(s, 25)) << 8 | uint32_t(at(s, 26)) << 16) + 1;
      d.height = (at(s, 27) | uint32_t(at(s, 28)) << 8 | uint32_t(at(s, 29)) << 16) + 1;
      break;
    default:
      return d;
  }
  d.known = d.width != 0 && d.height != 0;
  return d;
}

}  // namespace

std::string_view mime_type(ImageType t) {
  switch (t) {
    case ImageType::jpeg: return "image/jpeg";
    case ImageType::gif: return "image/gif";
    case ImageType::png: return "image/png";
    case ImageType::webp: return "image/webp";
    case ImageType::none: break;
  }
  return {};
}

std::string_view type_name(ImageType t) { return mime_type(t).substr(t == ImageType::none ? 0 : 6); }

ImageType sniff(std::string_view p) {
  if (p.size() < 16) return ImageType::none;
  if (at(p, 0) == 0xff && at(p, 1) == 0xd8) return ImageType::jpeg;
  if (p.substr(0, 4) == "GIF8" && (p[4] == '9' || p[4] == '7') && p[5] == 'a') return ImageType::gif;
  if (p.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) return ImageType::png;
  if (p.substr(0, 4) == "RIFF" && p.substr(8, 4) == "WEBP") return ImageType::webp;
  return ImageType::none;
}

Dimensions read_dimensions(ImageType t, std::string_view s) {
  Dimensions d;
  switch (t) {
    case ImageType::jpeg:
      return jpeg(s);
    case ImageType::gif:  // the logical screen, little-endian
      if (s.size() < 10) return d;
      d.width = at(s, 6) | uint32_t(at(s, 7)) << 8;
      d.height = at(s, 8) | uint32_t(at(s, 9)) << 8;
      break;
    case ImageType::png:  // IHDR's width and height (nginx reads their low 16 bits)
      if (s.size() < 24) return d;
      d.width = be16(s, 18);
      d.height = be16(s, 22);
      break;
    case ImageType::webp:
      return webp(s);
    case ImageType::none:
      return d;
  }
  d.known = d.width != 0 && d.height != 0;
  return d;
}

}  // namespace torii::image_filter
