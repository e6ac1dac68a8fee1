// ngx_http_charset_module's recoding directives: source_charset,
// override_charset and charset_map {} (charset and charset_types, which
// only name the charset, are in directives_small.cc). The maps are read
// into config/charset_config.h tables; modules/charset recodes with them.
#include <strings.h>

#include <memory>

#include "config/charset_config.h"
#include "core/quote.h"
#include "config/directives.h"

namespace torii::config {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// A charset name the config mentions, once: an upstream's X-Accel-Charset
// may name any of them (nginx's charset list).
void note_charset(Compiler& c, const std::string& name) {
  for (const auto& known : c.cfg().charsets)
    if (same_name(known, name)) return;
  c.cfg().charsets.push_back(name);
}

Status set_source_charset(Compiler& c, Scope& s, const Node& n) {
  s.settings->source_charset = n.args[0];
  if (n.args[0].find('$') == std::string::npos) note_charset(c, n.args[0]);
  check_charset_pair_later(c, s, n);
  return Ok{};
}

Status set_override_charset(Compiler&, Scope& s, const Node& n) {
  s.settings->override_charset = n.args[0] == "on";
  return Ok{};
}

// nginx's ngx_hextoi: hex digits only, at least one.
bool parse_hex(std::string_view s, uint32_t& out) {
  if (s.empty() || s.size() > 7) return false;
  out = 0;
  for (const char ch : s) {
    uint32_t d;
    if (ch >= '0' && ch <= '9') d = uint32_t(ch - '0');
    else if (ch >= 'a' && ch <= 'f') d = uint32_t(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F') d = uint32_t(ch - 'A' + 10);
    else return false;
    out = out * 16 + d;
  }
  return true;
}

// A UTF-8 sequence of 1 to 3 bytes (nginx's maps stop at U+FFFF): its code point.
bool utf8_code_point(const std::string& bytes, uint32_t& cp) {
  const auto b0 = uint8_t(bytes[0]);
  size_t len;
  if (b0 < 0x80) cp = b0, len = 1;
  else if (b0 >= 0xc2 && b0 < 0xe0) cp = b0 & 0x1f, len = 2;
  else if (b0 >= 0xe0 && b0 < 0xf0) cp = b0 & 0x0f, len = 3;
  else return false;
  if (bytes.size() != len) return false;
  for (size_t i = 1; i < len; ++i) {
    const auto b = uint8_t(bytes[i]);
    if ((b & 0xc0) != 0x80) return false;
    cp = (cp << 6) | (b & 0x3f);
  }
  return len == 1 || cp >= (len == 2 ? 0x80u : 0x800u);
}

// One line of a map: "BYTE VALUE", both hex; VALUE is a byte, or the UTF-8
// bytes of the character when the second charset is utf-8.
Status map_line(CharsetMap& m, const Node& d) {
  if (d.block) return node_error(d, "unexpected \"{\"");
  if (d.args.size() != 1) return node_error(d, "invalid parameters number");
  uint32_t from = 0;
  if (!parse_hex(d.name, from) || from > 255) return node_error(d, "invalid value " + q(d.name));
  const std::string& value = d.args[0];
  if (!m.to_utf8) {
    uint32_t to = 0;
    if (!parse_hex(value, to) || to > 255) return node_error(d, "invalid value " + q(value));
    m.forward[from] = uint8_t(to);
    m.backward[to] = uint8_t(from);
    return Ok{};
  }
  if (value.empty() || value.size() % 2 != 0 || value.size() > 6) return node_error(d, "invalid value " + q(value));
  std::string bytes;
  for (size_t i = 0; i < value.size(); i += 2) {
    uint32_t b = 0;
    if (!parse_hex(std::string_view(value).substr(i, 2), b)) return node_error(d, "invalid value " + q(value));
    bytes.push_back(char(b));
  }
  uint32_t cp = 0;
  if (!utf8_code_point(bytes, cp)) return node_error(d, "invalid value " + q(value));
  m.forward_utf8[from] = std::move(bytes);
  m.backward_utf8[cp] = uint8_t(from);
  return Ok{};
}

// charset_map FROM TO { BYTE VALUE; ... } (http only).
Status set_charset_map(Compiler& c, Scope&, const Node& n) {
  const std::string& from = n.args[0];
  const std::string& to = n.args[1];
  if (same_name(from, to))
    return node_error(n, "\"charset_map\" between the same charsets " + q(from) + " and " + q(to));
  if (same_name(from, "utf-8"))
    return node_error(n, "\"charset_map\" with \"utf-8\" charset should be given in the second column");
  for (const auto& m : c.cfg().charset_maps) {
    if ((same_name(m->from, from) && same_name(m->to, to)) || (same_name(m->from, to) && same_name(m->to, from)))
      return node_error(n, "duplicate \"charset_map\" between " + q(from) + " and " + q(to));
  }
  auto m = std::make_shared<CharsetMap>();
  m->from = from;
  m->to = to;
  m->to_utf8 = same_name(to, "utf-8");
  for (uint32_t b = 0; b < 256; ++b) {
    const char same = b < 0x80 ? char(b) : '?';
    m->forward[b] = m->backward[b] = uint8_t(same);
    m->forward_utf8[b] = std::string(1, same);
  }
  for (const auto& d : n.children) {
    auto st = map_line(*m, d);
    if (!st) return st;
  }
  note_charset(c, from);
  note_charset(c, to);
  c.cfg().charset_maps.push_back(std::move(m));
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

constexpr DirectiveSpec kCharsetDirectives[] = {
    {"source_charset", kHSL | kLocationIf, kArgs1, true, false, kMain, &set_source_charset},
    {"override_charset", kHSL | kLocationIf, kFlag, true, false, kMain, &set_override_charset},
    // Its lines are read by the setter (kUpstream: not checked as directives).
    {"charset_map", kHttp, kArgs2 | kBlock, false, false, kUpstream, &set_charset_map},
};

}  // namespace

void check_charset_pair_later(Compiler& c, Scope& s, const Node& n) {
  const LocationSettings* settings = s.settings;
  s.after_plain.push_back([&c, settings, &n]() -> Status {
    const std::string& to = settings->charset;
    const std::string& from = settings->source_charset;
    if (to.empty() || from.empty() || to.find('$') != std::string::npos || from.find('$') != std::string::npos ||
        same_name(to, from))
      return Ok{};
    for (const auto& m : c.cfg().charset_maps)
      if ((same_name(m->from, from) && same_name(m->to, to)) || (same_name(m->from, to) && same_name(m->to, from)))
        return Ok{};
    return node_error(n, "no \"charset_map\" between the charsets " + q(from) + " and " + q(to));
  });
}

std::span<const DirectiveSpec> charset_directives() { return kCharsetDirectives; }

}  // namespace torii::config
