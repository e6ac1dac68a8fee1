// A streaming compressor for one response, over a codec library (zlib,
// libbrotli, libzstd): input in pieces, output appended to a string.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "modules/compression/accept_encoding.h"

namespace torii::compression {

class Encoder {
 public:
  enum class Flush : uint8_t {
    none,    // the library may keep input back for a better ratio
    sync,    // everything given so far becomes decodable output (the stream goes on)
    finish,  // the end of the stream
  };
  virtual ~Encoder() = default;
  // Compresses `in` and appends what the library produces to `out`. False
  // on a library error (the response cannot go on).
  virtual bool write(std::string_view in, Flush flush, std::string& out) = 0;
};

// `size_hint`: the input length when known (else -1), so a small response
// does not pay for the library's largest window.
std::unique_ptr<Encoder> make_encoder(Coding coding, int level, int64_t size_hint);

// A gzip decoder for `gunzip`: same shape, decompressing.
std::unique_ptr<Encoder> make_gunzip();

}  // namespace torii::compression
