#include "upstream/memcached/reply.h"

#include <limits>

namespace torii::upstream::memcached {

namespace {

LineStatus fail(std::string& error, std::string_view what, std::string_view line, std::string_view key) {
  error = "memcached sent invalid ";
  error += what;
  error += " in response \"";
  error += line;
  error += "\" for key \"";
  error += key;
  error += '"';
  return LineStatus::error;
}

LineStatus invalid_response(std::string& error, std::string_view line) {
  error = "memcached sent invalid response: \"";
  error += line;
  error += '"';
  return LineStatus::error;
}

// Decimal digits only, at least one, no overflow (nginx's ngx_atoi/ngx_atoof).
template <typename T>
bool parse_decimal(std::string_view s, T& out) {
  if (s.empty()) return false;
  T v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    const T d = T(c - '0');
    if (v > (std::numeric_limits<T>::max() - d) / 10) return false;
    v = T(v * 10 + d);
  }
  out = v;
  return true;
}

}  // namespace

LineStatus parse_reply_line(std::string_view in, std::string_view key, bool read_flags, ReplyLine& out,
                            std::string& error) {
  const size_t lf = in.find('\n');
  if (lf == std::string_view::npos) return LineStatus::need_more;
  std::string_view line = in.substr(0, lf);
  out.size = lf + 1;
  if (line.empty() || line.back() != '\r') return invalid_response(error, line);
  line.remove_suffix(1);
  // nginx reads the line as a C string: a zero byte ends the words (the
  // length, read to the line's end, then fails on it).
  const std::string_view text = line.substr(0, line.find('\0'));

  constexpr std::string_view kValue = "VALUE ";
  if (text.substr(0, kValue.size()) == kValue) {
    std::string_view rest = text.substr(kValue.size());
    if (rest.substr(0, key.size()) != key) return fail(error, "key", line, key);
    rest.remove_prefix(key.size());
    if (rest.empty() || rest[0] != ' ') return invalid_response(error, line);
    rest.remove_prefix(1);
    const size_t space = rest.find(' ');
    if (space == std::string_view::npos) return invalid_response(error, line);
    uint64_t flags = 0;
    if (read_flags) {
      // nginx's flags are a signed machine word.
      if (!parse_decimal(rest.substr(0, space), flags) || flags > uint64_t(std::numeric_limits<int64_t>::max()))
        return fail(error, "flags", line, key);
    }
    const size_t length_at = size_t(rest.data() - line.data()) + space + 1;
    int64_t length = 0;
    if (!parse_decimal(line.substr(length_at), length)) return fail(error, "length", line, key);
    out.kind = ReplyLine::Kind::value;
    out.flags = flags;
    out.length = length;
    return LineStatus::done;
  }
  if (line == "END") {
    out.kind = ReplyLine::Kind::miss;
    out.flags = 0;
    out.length = 0;
    return LineStatus::done;
  }
  return invalid_response(error, line);
}

ValueReader::Status ValueReader::feed(std::string_view in, std::string_view& value) {
  value = {};
  if (left_ > 0) {
    const size_t take = size_t(std::min<int64_t>(left_, int64_t(in.size())));
    value = in.substr(0, take);
    left_ -= int64_t(take);
    in.remove_prefix(take);
  }
  if (in.empty()) return trailer_at_ == kTrailer.size() ? Status::done : Status::more;
  const std::string_view owed = kTrailer.substr(trailer_at_);
  if (in.size() > owed.size() || owed.substr(0, in.size()) != in) return Status::bad_trailer;
  trailer_at_ += in.size();
  return trailer_at_ == kTrailer.size() ? Status::done : Status::more;
}

}  // namespace torii::upstream::memcached
