#include "upstream/uwsgi/packet.h"

namespace torii::upstream::uwsgi {

namespace {

void append_u16(std::string& out, size_t n) {
  out.push_back(static_cast<char>(n & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
}

}  // namespace

bool PacketBuilder::add(std::string_view key, std::string_view value) {
  if (key.size() > 0xffff || value.size() > 0xffff) return false;
  append_u16(out_, key.size());
  out_.append(key);
  append_u16(out_, value.size());
  out_.append(value);
  return true;
}

bool PacketBuilder::finish(uint8_t modifier1, uint8_t modifier2) {
  const size_t size = out_.size() - start_ - kHeaderSize;
  if (size > kMaxVars) return false;
  out_[start_] = static_cast<char>(modifier1);
  out_[start_ + 1] = static_cast<char>(size & 0xff);
  out_[start_ + 2] = static_cast<char>((size >> 8) & 0xff);
  out_[start_ + 3] = static_cast<char>(modifier2);
  return true;
}

}  // namespace torii::upstream::uwsgi
