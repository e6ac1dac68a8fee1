#include "stream/client_hello.h"

#include <cstdint>

namespace torii::stream {

namespace {

// SSL_get_version()'s names, as nginx prints $ssl_preread_protocol.
std::string_view version_name(uint8_t major, uint8_t minor) {
  if (major == 0 && minor == 2) return "SSLv2";
  if (major != 3) return {};
  switch (minor) {
    case 0:
      return "SSLv3";
    case 1:
      return "TLSv1";
    case 2:
      return "TLSv1.1";
    case 3:
      return "TLSv1.2";
    case 4:
      return "TLSv1.3";
    default:
      return {};
  }
}

size_t be(std::string_view b) {
  size_t v = 0;
  for (char c : b) v = (v << 8) | uint8_t(c);
  return v;
}

// A cursor over the handshake message: `left` is what the message's own
// length says remains (reading past it is malformed), and the data is
// what has arrived (reading past it needs more).
class Cursor {
 public:
  enum class R : uint8_t { ok, more, bad };
  Cursor(std::string_view data, size_t pos, size_t left) : data_(data), pos_(pos), left_(left) {}
  R take(size_t n, std::string_view* out = nullptr) {
    if (left_ < n) return R::bad;
    if (data_.size() - pos_ < n) return R::more;
    if (out) *out = data_.substr(pos_, n);
    pos_ += n;
    left_ -= n;
    return R::ok;
  }
  size_t left() const { return left_; }

 private:
  std::string_view data_;
  size_t pos_;
  size_t left_;
};

HelloResult failed(Cursor::R r) { return r == Cursor::R::more ? HelloResult::need_more : HelloResult::not_hello; }

// The handshake message (its records' payloads joined), read field by
// field in nginx's order; the extensions' own lengths are checked, the
// extension list's total is not (nginx reads until the message ends).
HelloResult parse_message(std::string_view msg, ClientHelloInfo& out) {
  out = {};
  if (msg.size() < 4) return HelloResult::need_more;
  if (uint8_t(msg[0]) != 1) return HelloResult::not_hello;  // not a ClientHello
  Cursor c(msg, 4, be(msg.substr(1, 3)));
  using R = Cursor::R;
  std::string_view f;
  R r;
  if ((r = c.take(2, &f)) != R::ok) return failed(r);
  uint8_t version[2] = {uint8_t(f[0]), uint8_t(f[1])};
  if ((r = c.take(32)) != R::ok) return failed(r);  // random
  // session id, cipher suites, compression methods: skipped by their lengths
  for (size_t width : {1, 2, 1}) {
    if ((r = c.take(width, &f)) != R::ok) return failed(r);
    if ((r = c.take(be(f))) != R::ok) return failed(r);
  }
  bool host_seen = false, alpn_seen = false;
  auto finish = [&] {
    out.protocol = std::string(version_name(version[0], version[1]));
    return HelloResult::done;
  };
  if (c.left() == 0) return finish();  // no extensions
  if ((r = c.take(2)) != R::ok) return failed(r);
  for (;;) {
    if (c.left() == 0) return finish();
    std::string_view head;
    if ((r = c.take(4, &head)) != R::ok) return failed(r);
    const size_t type = be(head.substr(0, 2));
    if (type == 0 && !host_seen) {  // server_name
      if ((r = c.take(2, &f)) != R::ok) return failed(r);
      size_t list = be(f);
      if ((r = c.take(3, &f)) != R::ok) return failed(r);
      if (f[0] != 0) return HelloResult::not_hello;  // not a DNS host name
      const size_t len = be(f.substr(1));
      if (list < 3 + len) return HelloResult::not_hello;
      list -= 3 + len;
      if ((r = c.take(len, &f)) != R::ok) return failed(r);
      out.server_name = std::string(f);
      host_seen = true;
      if ((r = c.take(list)) != R::ok) return failed(r);  // further names
    } else if (type == 16 && !alpn_seen) {  // application_layer_protocol_negotiation
      if ((r = c.take(2, &f)) != R::ok) return failed(r);
      size_t list = be(f);
      alpn_seen = true;
      do {
        if ((r = c.take(1, &f)) != R::ok) return failed(r);
        const size_t len = uint8_t(f[0]);
        if (len == 0 || list < 1 + len) return HelloResult::not_hello;
        list -= 1 + len;
        if ((r = c.take(len, &f)) != R::ok) return failed(r);
        out.alpn.append(f);
        if (list) out.alpn.push_back(',');
      } while (list);
    } else if (type == 43) {  // supported_versions: nginx reports TLSv1.3 whenever it is there
      if ((r = c.take(1, &f)) != R::ok) return failed(r);
      version[0] = 3;
      version[1] = 4;
      if ((r = c.take(uint8_t(f[0]))) != R::ok) return failed(r);
    } else {
      if ((r = c.take(be(head.substr(2, 2)))) != R::ok) return failed(r);
    }
  }
}

}  // namespace

HelloResult parse_client_hello(std::string_view bytes, ClientHelloInfo& out) {
  std::string message;
  size_t pos = 0;
  while (bytes.size() - pos >= 5) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + pos);
    if ((p[0] & 0x80) && p[2] == 1 && (p[3] == 0 || p[3] == 3)) {  // an SSLv2-format ClientHello
      out = {};
      out.protocol = std::string(version_name(p[3], p[4]));
      return HelloResult::done;
    }
    if (p[0] != 0x16 || p[1] != 3) return HelloResult::not_hello;  // not a TLS handshake record
    const size_t len = (size_t(p[3]) << 8) | p[4];
    if (bytes.size() - pos < len + 5) break;  // a record is read whole before it is parsed
    message.append(bytes.substr(pos + 5, len));
    pos += 5 + len;
    const HelloResult r = parse_message(message, out);
    if (r != HelloResult::need_more) return r;
  }
  return HelloResult::need_more;
}

}  // namespace torii::stream
