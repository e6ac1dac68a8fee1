#include "modules/charset/recoder.h"

namespace torii::charset {

namespace {

constexpr uint32_t kInvalid = 0xffffffff;
constexpr uint32_t kIncomplete = 0xfffffffe;

// One UTF-8 sequence at `in[pos]` (its first byte is 0x80 or more), read as
// nginx's ngx_utf8_decode reads it: `pos` moves past what was judged.
uint32_t decode(std::string_view in, size_t& pos) {
  uint32_t u = uint8_t(in[pos]);
  uint32_t valid;
  size_t len;
  if (u >= 0xf0) {
    u &= 0x07, valid = 0xffff, len = 3;
  } else if (u >= 0xe0) {
    u &= 0x0f, valid = 0x7ff, len = 2;
  } else if (u >= 0xc2) {
    u &= 0x1f, valid = 0x7f, len = 1;
  } else {
    ++pos;  // a continuation byte or an overlong lead on its own
    return kInvalid;
  }
  if (in.size() - pos - 1 < len) return kIncomplete;
  ++pos;
  for (; len > 0; --len) {
    const uint32_t c = uint8_t(in[pos++]);
    if (c < 0x80) return kInvalid;
    u = (u << 6) | (c & 0x3f);
  }
  return u > valid ? u : kInvalid;  // an overlong form is invalid
}

}  // namespace

void Recoder::feed(std::string_view in, std::string& out) {
  if (map_.to_utf8 && direction_ == Direction::backward) return from_utf8(in, out);
  out.reserve(out.size() + in.size());
  if (map_.to_utf8) {
    for (const char ch : in) {
      const auto b = uint8_t(ch);
      if (b < 0x80) out.push_back(ch);
      else out.append(map_.forward_utf8[b]);
    }
    return;
  }
  const auto& table = direction_ == Direction::forward ? map_.forward : map_.backward;
  for (const char ch : in) out.push_back(char(table[uint8_t(ch)]));
}

void Recoder::from_utf8(std::string_view in, std::string& out) {
  std::string joined;
  if (!held_.empty()) {  // the sequence the last piece began: rare, so a copy
    joined = std::move(held_);
    held_.clear();
    joined.append(in);
    in = joined;
  }
  out.reserve(out.size() + in.size());
  size_t pos = 0;
  while (pos < in.size()) {
    const auto b = uint8_t(in[pos]);
    if (b < 0x80) {
      out.push_back(char(b));
      ++pos;
      continue;
    }
    const size_t start = pos;
    const uint32_t cp = decode(in, pos);
    if (cp == kIncomplete) {
      held_.assign(in.substr(start));
      return;
    }
    put_code_point(cp, out);
  }
}

void Recoder::put_code_point(uint32_t cp, std::string& out) const {
  if (cp > 0x10ffff) {  // invalid too
    out.push_back('?');
    return;
  }
  if (cp < 0x10000) {
    const auto it = map_.backward_utf8.find(cp);
    if (it != map_.backward_utf8.end()) {
      out.push_back(char(it->second));
      return;
    }
  }
  out.append("&#").append(std::to_string(cp)).push_back(';');
}

void Recoder::finish(std::string&) {
  held_.clear();  // a sequence the body's end cut short: dropped, as nginx drops it
}

}  // namespace torii::charset
