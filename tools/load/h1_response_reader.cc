#include "load/h1_response_reader.h"

#include <algorithm>
#include <cstring>

namespace torii::load {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Calls f(token) for each comma-separated element of a field value.
template <typename F>
void for_each_token(std::string_view value, F f) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    f(trim(value.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void H1ResponseReader::begin(bool head_request) {
  head_request_ = head_request;
  state_ = State::head;
  stash_.clear();
  started_ = false;
  status_ = 0;
  error_ = "";
}

size_t H1ResponseReader::feed(const char* data, size_t len) {
  size_t used = 0;
  while (used < len && (state_ == State::head || state_ == State::body)) {
    started_ = true;
    if (state_ == State::head) {
      used += feed_head(data + used, len - used);
    } else {
      used += feed_body(data + used, len - used);
    }
  }
  return used;
}

size_t H1ResponseReader::feed_head(const char* data, size_t len) {
  // Look for the blank line that ends the head; with a stash, across the
  // join (up to 3 bytes of "\r\n\r\n" may already be in the stash).
  size_t before = stash_.size();
  std::string_view head;
  size_t used = 0;
  if (before == 0) {
    std::string_view view(data, len);
    size_t end = view.find("\r\n\r\n");
    if (end == std::string_view::npos) {
      if (len > max_head_) {
        fail("response head too large");
        return len;
      }
      stash_.assign(data, len);
      return len;
    }
    if (end + 4 > max_head_) {
      fail("response head too large");
      return len;
    }
    head = view.substr(0, end + 4);
    used = end + 4;
  } else {
    size_t keep = std::min<size_t>(before, 3);
    // A stash holds at most max_head_ bytes, so there is room for 4 more.
    size_t room = max_head_ + 4 - before;
    stash_.append(data, std::min(len, room));
    size_t end = std::string_view(stash_).find("\r\n\r\n", before - keep);
    if (end == std::string_view::npos) {
      if (stash_.size() > max_head_) {
        fail("response head too large");
        return len;
      }
      return len;
    }
    if (end + 4 > max_head_) {
      fail("response head too large");
      return len;
    }
    head = std::string_view(stash_).substr(0, end + 4);
    used = end + 4 - before;
  }
  if (!parse_head(head)) return used;
  stash_.clear();
  if (status_ >= 100 && status_ < 200) {
    // Interim response (100 Continue, 103 Early Hints): the final one follows.
    state_ = State::head;
    return used;
  }
  if (framing_ == Framing::none || (framing_ == Framing::length && remaining_ == 0)) {
    state_ = State::done;
  } else {
    state_ = State::body;
    chunk_ = Chunk::size;
    chunk_digits_ = false;
  }
  return used;
}

bool H1ResponseReader::parse_head(std::string_view head) {
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  // HTTP/1.x SP 3DIGIT [SP reason]
  if (line.size() < 12 || !line.starts_with("HTTP/1.") || (line[7] != '0' && line[7] != '1') ||
      line[8] != ' ' || (line.size() > 12 && line[12] != ' ')) {
    fail("malformed status line");
    return false;
  }
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') {
      fail("malformed status line");
      return false;
    }
    status = status * 10 + (line[i] - '0');
  }
  if (status < 100) {
    fail("malformed status line");
    return false;
  }
  if (status == 101) {
    fail("unexpected 101 Switching Protocols");
    return false;
  }
  status_ = status;
  bool http10 = line[7] == '0';
  bool close = false, keep_alive_token = false, chunked = false, has_te = false;
  int64_t length = -1;

  std::string_view rest = head.substr(eol + 2);
  while (!rest.empty()) {
    size_t end = rest.find("\r\n");
    std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end + 2);
    if (field.empty()) break;
    size_t colon = field.find(':');
    if (colon == std::string_view::npos || colon == 0 || field.front() == ' ' || field.front() == '\t') {
      fail("malformed header field");
      return false;
    }
    std::string_view name = field.substr(0, colon);
    std::string_view value = trim(field.substr(colon + 1));
    if (iequals(name, "content-length")) {
      int64_t n = 0;
      if (value.empty()) {
        fail("bad Content-Length");
        return false;
      }
      for (char c : value) {
        if (c < '0' || c > '9' || n > (INT64_MAX - 9) / 10) {
          fail("bad Content-Length");
          return false;
        }
        n = n * 10 + (c - '0');
      }
      if (length >= 0 && length != n) {
        fail("conflicting Content-Length");
        return false;
      }
      length = n;
    } else if (iequals(name, "transfer-encoding")) {
      has_te = true;
      chunked = false;
      for_each_token(value, [&](std::string_view t) { chunked = iequals(t, "chunked"); });
    } else if (iequals(name, "connection")) {
      for_each_token(value, [&](std::string_view t) {
        if (iequals(t, "close")) close = true;
        if (iequals(t, "keep-alive")) keep_alive_token = true;
      });
    }
  }

  keep_alive_ = !close && (!http10 || keep_alive_token);
  if (head_request_ || (status >= 100 && status < 200) || status == 204 || status == 304) {
    framing_ = Framing::none;
  } else if (has_te) {
    if (!chunked) {
      // RFC 9112 6.3: a body delimited by the close.
      framing_ = Framing::until_close;
      keep_alive_ = false;
    } else {
      framing_ = Framing::chunked;
    }
  } else if (length >= 0) {
    framing_ = Framing::length;
    remaining_ = uint64_t(length);
  } else {
    framing_ = Framing::until_close;
    keep_alive_ = false;
  }
  return true;
}

size_t H1ResponseReader::feed_body(const char* data, size_t len) {
  switch (framing_) {
    case Framing::length: {
      size_t n = size_t(std::min<uint64_t>(remaining_, len));
      remaining_ -= n;
      if (remaining_ == 0) state_ = State::done;
      return n;
    }
    case Framing::until_close:
      return len;
    case Framing::chunked:
      return feed_chunked(data, len);
    case Framing::none:
      state_ = State::done;
      return 0;
  }
  return len;
}

// chunk = size [; ext] CRLF data CRLF ... 0 CRLF *(trailer CRLF) CRLF. A bare
// LF is taken for CRLF; the data is skipped in one step.
size_t H1ResponseReader::feed_chunked(const char* data, size_t len) {
  size_t i = 0;
  while (i < len && state_ == State::body) {
    char c = data[i];
    switch (chunk_) {
      case Chunk::size: {
        int d = hex_digit(c);
        if (d >= 0) {
          if (remaining_ > (UINT64_MAX >> 4)) {
            fail("chunk size too large");
            return i;
          }
          remaining_ = remaining_ * 16 + uint64_t(d);
          chunk_digits_ = true;
          ++i;
          break;
        }
        if (!chunk_digits_) {
          fail("bad chunk size");
          return i;
        }
        if (c == ';' || c == ' ' || c == '\t' || c == '\r') {
          chunk_ = Chunk::extension;
          ++i;
          break;
        }
        if (c != '\n') {
          fail("bad chunk size");
          return i;
        }
        [[fallthrough]];
      }
      case Chunk::extension:
        ++i;
        if (c == '\n') {
          chunk_digits_ = false;
          chunk_ = remaining_ == 0 ? Chunk::trailer_start : Chunk::data;
        }
        break;
      case Chunk::data: {
        size_t n = size_t(std::min<uint64_t>(remaining_, len - i));
        remaining_ -= n;
        i += n;
        if (remaining_ == 0) chunk_ = Chunk::data_end;
        break;
      }
      case Chunk::data_end:
        ++i;
        if (c == '\n') {
          chunk_ = Chunk::size;
        } else if (c != '\r') {
          fail("chunk data longer than its size");
          return i;
        }
        break;
      case Chunk::trailer_start:
        ++i;
        if (c == '\n') {
          state_ = State::done;
        } else if (c != '\r') {
          chunk_ = Chunk::trailer;
        }
        break;
      case Chunk::trailer:
        ++i;
        if (c == '\n') chunk_ = Chunk::trailer_start;
        break;
    }
  }
  return i;
}

void H1ResponseReader::on_eof() {
  if (state_ == State::body && framing_ == Framing::until_close) {
    state_ = State::done;
  } else if (state_ == State::head || state_ == State::body) {
    fail("connection closed before the response was complete");
  }
}

}  // namespace torii::load
