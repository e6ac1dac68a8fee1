#include "modules/secure_link/secure_link.h"

#include <openssl/evp.h>

#include <ctime>

#include "config/secure_link_config.h"
#include "http/exchange.h"
#include "http/variables.h"

namespace torii::secure_link {

namespace {

constexpr size_t kMd5Size = 16;

bool md5(std::string_view a, std::string_view b, unsigned char out[kMd5Size]) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx) return false;
  unsigned int len = 0;
  const bool ok = EVP_DigestInit_ex(ctx, EVP_md5(), nullptr) == 1 && EVP_DigestUpdate(ctx, a.data(), a.size()) == 1 &&
                  EVP_DigestUpdate(ctx, b.data(), b.size()) == 1 && EVP_DigestFinal_ex(ctx, out, &len) == 1 &&
                  len == kMd5Size;
  EVP_MD_CTX_free(ctx);
  return ok;
}

// Compares in time independent of where the first difference is.
bool same(const unsigned char* a, const unsigned char* b) {
  unsigned char diff = 0;
  for (size_t i = 0; i < kMd5Size; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// nginx's ngx_atotm: decimal digits only, no sign; -1 on anything else.
int64_t parse_time(std::string_view s) {
  if (s.empty()) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    if (v > (INT64_MAX - (c - '0')) / 10) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The "HASH[,EXPIRES]" text split at its first comma: the expiry part
// when there is one and it is a positive time; false when it is not.
struct Parts {
  std::string_view hash;
  std::string_view expires;  // empty: none given
  int64_t expires_at = 0;
};
bool split_link(std::string_view value, Parts& parts) {
  const size_t comma = value.find(',');
  parts.hash = value.substr(0, comma);
  if (comma == std::string_view::npos) return true;
  parts.expires = value.substr(comma + 1);
  parts.expires_at = parse_time(parts.expires);
  return parts.expires_at > 0;
}

// secure_link_secret: /PREFIX/MD5HEX/LINK in the request's target as sent.
bool append_old(const http::Exchange& ex, const std::string& secret, std::string& out) {
  std::string_view uri = ex.req.target;
  if (uri.empty()) return false;
  uri.remove_prefix(1);
  const size_t first = uri.find('/');
  if (first == std::string_view::npos) return false;
  uri.remove_prefix(first + 1);
  const size_t second = uri.find('/');
  if (second == std::string_view::npos) return false;
  const std::string_view hex = uri.substr(0, second);
  const std::string_view link = uri.substr(second + 1);
  if (hex.size() != 2 * kMd5Size || link.empty()) return false;
  unsigned char want[kMd5Size];
  if (!md5(link, secret, want)) return false;
  unsigned char given[kMd5Size];
  for (size_t i = 0; i < kMd5Size; ++i) {
    const int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    given[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  if (!same(given, want)) return false;
  out.append(link);
  return true;
}

}  // namespace

bool decode_base64url(std::string_view in, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  size_t len = 0;
  while (len < in.size() && in[len] != '=') {
    if (value(in[len]) < 0) return false;
    ++len;
  }
  if (len % 4 == 1) return false;
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; ++i) {
    acc = (acc << 6) | static_cast<uint32_t>(value(in[i]));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

bool append_secure_link(const http::Exchange& ex, std::string& out) {
  const auto& cfg = ex.settings().secure_link;
  if (!cfg) return false;
  if (!cfg->secret.empty()) return append_old(ex, cfg->secret, out);
  if (!cfg->has_link || !cfg->has_md5) return false;
  const std::string value = http::render(cfg->link, ex);
  Parts parts;
  if (!split_link(value, parts)) return false;
  if (parts.hash.size() > 24) return false;
  std::string hash;
  if (!decode_base64url(parts.hash, hash) || hash.size() != kMd5Size) return false;
  unsigned char want[kMd5Size];
  if (!md5(http::render(cfg->md5, ex), {}, want)) return false;
  if (!same(reinterpret_cast<const unsigned char*>(hash.data()), want)) return false;
  out.push_back(!parts.expires.empty() && parts.expires_at < int64_t(time(nullptr)) ? '0' : '1');
  return true;
}

bool append_secure_link_expires(const http::Exchange& ex, std::string& out) {
  const auto& cfg = ex.settings().secure_link;
  if (!cfg || !cfg->secret.empty() || !cfg->has_link || !cfg->has_md5) return false;
  const std::string value = http::render(cfg->link, ex);
  Parts parts;
  if (!split_link(value, parts) || parts.expires.empty()) return false;
  out.append(parts.expires);
  return true;
}

}  // namespace torii::secure_link
