#include "modules/image_filter/transform.h"

#include <gd.h>

#include <memory>

namespace torii::image_filter {

namespace {

using Filter = config::ImageFilterConfig::Filter;

struct GdImageDeleter {
  void operator()(gdImage* img) const { gdImageDestroy(img); }
};
using Image = std::unique_ptr<gdImage, GdImageDeleter>;

struct GdFree {
  void operator()(void* p) const { gdFree(p); }
};

Image decode(ImageType type, std::string_view in, const char*& error) {
  void* data = const_cast<char*>(in.data());  // libgd only reads it
  const int size = static_cast<int>(in.size());
  gdImagePtr img = nullptr;
  switch (type) {
    case ImageType::jpeg:
      img = gdImageCreateFromJpegPtr(size, data);
      error = "gdImageCreateFromJpegPtr() failed";
      break;
    case ImageType::gif:
      img = gdImageCreateFromGifPtr(size, data);
      error = "gdImageCreateFromGifPtr() failed";
      break;
    case ImageType::png:
      img = gdImageCreateFromPngPtr(size, data);
      error = "gdImageCreateFromPngPtr() failed";
      break;
    case ImageType::webp:
      img = gdImageCreateFromWebpPtr(size, data);
      error = "gdImageCreateFromWebpPtr() failed";
      break;
    case ImageType::none:
      error = "unknown image type";
      break;
  }
  if (img) error = nullptr;
  return Image(img);
}

// A palette image stays one (with as many colours), a true-colour one stays so.
Image blank(int w, int h, int colors) { return Image(colors == 0 ? gdImageCreateTrueColor(w, h) : gdImageCreate(w, h)); }

std::string encode(ImageType type, gdImagePtr img, const Transform& t, const char*& error) {
  int size = 0;
  void* out = nullptr;
  switch (type) {
    case ImageType::jpeg:
      if (t.jpeg_quality <= 0) break;
      out = gdImageJpegPtr(img, &size, t.jpeg_quality);
      error = "gdImageJpegPtr() failed";
      break;
    case ImageType::gif:
      out = gdImageGifPtr(img, &size);
      error = "gdImageGifPtr() failed";
      break;
    case ImageType::png:
      out = gdImagePngPtr(img, &size);
      error = "gdImagePngPtr() failed";
      break;
    case ImageType::webp:
      if (t.webp_quality <= 0) break;
      out = gdImageWebpPtrEx(img, &size, t.webp_quality);
      error = "gdImageWebpPtrEx() failed";
      break;
    case ImageType::none:
      break;
  }
  if (!out) {
    if (!error) error = "invalid quality";
    return {};
  }
  std::unique_ptr<void, GdFree> owned(out);
  error = nullptr;
  return std::string(static_cast<const char*>(out), static_cast<size_t>(size));
}

// One side scaled so the other fits its limit, at least one pixel.
int scaled(int side, uint64_t limit, int other) {
  const int64_t v = int64_t(side) * int64_t(limit) / other;
  return v > 0 ? int(v) : 1;
}

}  // namespace

Transformed transform(ImageType type, std::string_view in, const Transform& t) {
  Transformed r;
  Image src = decode(type, in, r.error);
  if (!src) return r;
  const int sx = gdImageSX(src.get()), sy = gdImageSY(src.get());
  if (!t.force && t.angle == 0 && uint64_t(sx) <= t.max_width && uint64_t(sy) <= t.max_height) {
    r.as_is = true;
    return r;
  }
  // A palette image's transparent colour is found again in the result by
  // its RGB (the index changes).
  const int colors = gdImageColorsTotal(src.get());
  int palette = 0, transparent = -1, red = 0, green = 0, blue = 0;
  if (colors && t.transparency) {
    transparent = gdImageGetTransparent(src.get());
    if (transparent != -1) {
      palette = colors;
      red = gdImageRed(src.get(), transparent);
      green = gdImageGreen(src.get(), transparent);
      blue = gdImageBlue(src.get(), transparent);
    }
  }
  gdImageColorTransparent(src.get(), -1);

  int dx = sx, dy = sy;
  bool resize = false;
  if (t.filter == Filter::resize) {
    if (uint64_t(dx) > t.max_width) {
      dy = scaled(dy, t.max_width, dx);
      dx = int(t.max_width);
    }
    if (uint64_t(dy) > t.max_height) {
      dx = scaled(dx, t.max_height, dy);
      dy = int(t.max_height);
    }
    resize = true;
  } else if (t.filter == Filter::crop) {
    // Scale so the smaller side fits; the crop below takes the rest.
    if (double(dx) / dy < double(t.max_width) / double(t.max_height)) {
      if (uint64_t(dx) > t.max_width) {
        dy = scaled(dy, t.max_width, dx);
        dx = int(t.max_width);
        resize = true;
      }
    } else if (uint64_t(dy) > t.max_height) {
      dx = scaled(dx, t.max_height, dy);
      dy = int(t.max_height);
      resize = true;
    }
  }

  Image dst;
  if (resize) {
    dst = blank(dx, dy, palette);
    if (!dst) {
      r.error = colors ? "gdImageCreate() failed" : "gdImageCreateTrueColor() failed";
      return r;
    }
    if (colors == 0) {
      gdImageSaveAlpha(dst.get(), 1);
      gdImageAlphaBlending(dst.get(), 0);
    }
    gdImageCopyResampled(dst.get(), src.get(), 0, 0, 0, 0, dx, dy, sx, sy);
    if (colors) gdImageTrueColorToPalette(dst.get(), 1, 256);
  } else {
    dst = std::move(src);
  }

  if (t.angle) {
    // Rotated about the centre; an even side needs the extra pixel nginx adds.
    const int ax = dx % 2 == 0 ? 1 : 0, ay = dy % 2 == 0 ? 1 : 0;
    const bool quarter = t.angle == 90 || t.angle == 270;
    Image rotated = quarter ? blank(dy, dx, palette) : blank(dx, dy, palette);
    if (!rotated) {
      r.error = palette ? "gdImageCreate() failed" : "gdImageCreateTrueColor() failed";
      return r;
    }
    int ox = dx / 2 - ax, oy = dy / 2 - ay;  // 180
    if (t.angle == 90) {
      ox = dy / 2 + ay;
      oy = dx / 2 - ax;
    } else if (t.angle == 270) {
      ox = dy / 2 - ay;
      oy = dx / 2 + ax;
    }
    gdImageCopyRotated(rotated.get(), dst.get(), ox, oy, 0, 0, dx + ax, dy + ay, int(t.angle));
    dst = std::move(rotated);
    if (quarter) std::swap(dx, dy);
  }

  if (t.filter == Filter::crop) {
    const int ox = uint64_t(dx) > t.max_width ? dx - int(t.max_width) : 0;
    const int oy = uint64_t(dy) > t.max_height ? dy - int(t.max_height) : 0;
    if (ox || oy) {
      Image cropped = blank(dx - ox, dy - oy, colors);
      if (!cropped) {
        r.error = colors ? "gdImageCreate() failed" : "gdImageCreateTrueColor() failed";
        return r;
      }
      if (colors == 0) {
        gdImageSaveAlpha(cropped.get(), 1);
        gdImageAlphaBlending(cropped.get(), 0);
      }
      gdImageCopy(cropped.get(), dst.get(), 0, 0, ox / 2, oy / 2, dx - ox, dy - oy);  // the centre
      if (colors) gdImageTrueColorToPalette(cropped.get(), 1, 256);
      dst = std::move(cropped);
    }
  }

  if (transparent != -1 && colors) gdImageColorTransparent(dst.get(), gdImageColorExact(dst.get(), red, green, blue));
  if (t.sharpen > 0) gdImageSharpen(dst.get(), t.sharpen);
  gdImageInterlace(dst.get(), t.interlace ? 1 : 0);
  r.bytes = encode(type, dst.get(), t, r.error);
  return r;
}

}  // namespace torii::image_filter
