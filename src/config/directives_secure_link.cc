// The secure_link module's directives (nginx's
// ngx_http_secure_link_module): secure_link, secure_link_md5,
// secure_link_secret.
#include <string>

#include "config/directives.h"
#include "config/secure_link_config.h"

namespace torii::config {

namespace {

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// Scope::secure_link_here bits.
enum : uint32_t { kLinkHere = 1, kMd5Here = 2, kSecretHere = 4 };

// Copy-on-write: a block shares its parent's settings until it changes
// one. As nginx's merge: a block with secure_link or secure_link_md5 of
// its own does not inherit a secret, and one with a secret uses neither of
// the others; a secret mixed with them in one block is an error, checked
// once the block's lines are read.
template <typename F>
Status edit(Scope& s, const Node& n, uint32_t bit, F&& f) {
  auto c = s.settings->secure_link ? std::make_shared<SecureLinkConfig>(*s.settings->secure_link)
                                   : std::make_shared<SecureLinkConfig>();
  Status st = f(*c);
  if (!st) return st;
  if (s.secure_link_here == 0) {
    Scope* scope = &s;
    const Node* line = &n;
    s.after_plain.push_back([scope, line]() -> Status {
      const uint32_t here = scope->secure_link_here;
      if ((here & kSecretHere) && (here & (kLinkHere | kMd5Here)))
        return node_error(*line, "\"secure_link_secret\" cannot be mixed with \"secure_link\" and \"secure_link_md5\"");
      return Ok{};
    });
  }
  s.secure_link_here |= bit;
  s.settings->secure_link = std::move(c);
  return Ok{};
}

Status set_link(Compiler&, Scope& s, const Node& n) {
  return edit(s, n, kLinkHere, [&](SecureLinkConfig& c) -> Status {
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    c.link = std::move(*t);
    c.has_link = true;
    c.secret.clear();
    return Ok{};
  });
}

Status set_md5(Compiler&, Scope& s, const Node& n) {
  return edit(s, n, kMd5Here, [&](SecureLinkConfig& c) -> Status {
    auto t = compile_template(n.args[0]);
    if (!t) return node_error(n, t.error());
    c.md5 = std::move(*t);
    c.has_md5 = true;
    c.secret.clear();
    return Ok{};
  });
}

Status set_secret(Compiler&, Scope& s, const Node& n) {
  return edit(s, n, kSecretHere, [&](SecureLinkConfig& c) -> Status {
    c = SecureLinkConfig{};
    c.secret = n.args[0];
    return Ok{};
  });
}

constexpr DirectiveSpec kSecureLinkDirectives[] = {
    {"secure_link", kHSL, kArgs1, true, false, kMain, &set_link},
    {"secure_link_md5", kHSL, kArgs1, true, false, kMain, &set_md5},
    {"secure_link_secret", kLocation, kArgs1, true, false, kMain, &set_secret},
};

}  // namespace

std::span<const DirectiveSpec> secure_link_directives() { return kSecureLinkDirectives; }

}  // namespace torii::config
