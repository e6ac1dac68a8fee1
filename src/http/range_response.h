// The 206 responses of byte ranges of stored bytes: the Content-Range value
// and a multipart/byteranges body, for every handler that serves ranges of
// a file (static files, the cache's entries).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/range.h"
#include "http/response.h"

namespace torii::http {

class Exchange;
struct OpenFile;

// "bytes FIRST-LAST/SIZE".
std::string content_range(const ByteRange& r, int64_t size);

// Sends `head` as a 206 whose body is one part per range: the ranges are of
// a representation of `size` bytes that starts at `base` in `file`; `type`
// (the representation's Content-Type, may be empty) goes in each part.
void send_multipart(Exchange& ex, ResponseHead head, const std::shared_ptr<const OpenFile>& file, int64_t base,
                    int64_t size, std::string_view type, const std::vector<ByteRange>& ranges);

}  // namespace torii::http
