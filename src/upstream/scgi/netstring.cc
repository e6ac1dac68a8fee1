#include "upstream/scgi/netstring.h"

namespace torii::upstream::scgi {

HeadBuilder::HeadBuilder(int64_t content_length) {
  add("CONTENT_LENGTH", std::to_string(content_length > 0 ? content_length : 0));
}

void HeadBuilder::add(std::string_view name, std::string_view value) {
  headers_.append(name);
  headers_.push_back('\0');
  headers_.append(value);
  headers_.push_back('\0');
}

void HeadBuilder::finish(std::string& out) const {
  out.append(std::to_string(headers_.size()));
  out.push_back(':');
  out.append(headers_);
  out.push_back(',');
}

}  // namespace torii::upstream::scgi
