#include "modules/compression/accept_encoding.h"

#include "core/ascii.h"

namespace torii::compression {

namespace {

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

using core::iequals;

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in
// thousandths; -1 when malformed.
int parse_qvalue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return -1;
  int q = (v[0] - '0') * 1000;
  if (v.size() == 1) return q;
  if (v[1] != '.' || v.size() > 5) return -1;
  int scale = 100;
  for (char c : v.substr(2)) {
    if (c < '0' || c > '9') return -1;
    q += (c - '0') * scale;
    scale /= 10;
  }
  return q > 1000 ? -1 : q;
}

// The q parameter of one element's parameters ("; q=0.5; x=y"); 1000 when
// there is none, -1 when it is malformed.
int element_quality(std::string_view params) {
  int q = 1000;
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view p = trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (p.empty()) continue;
    size_t eq = p.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = trim(p.substr(0, eq));
    if (!iequals(name, "q")) continue;
    q = parse_qvalue(trim(p.substr(eq + 1)));
  }
  return q;
}

}  // namespace

std::string_view coding_name(Coding c) {
  switch (c) {
    case Coding::gzip: return "gzip";
    case Coding::br: return "br";
    case Coding::zstd: return "zstd";
    case Coding::identity: break;
  }
  return "identity";
}

int AcceptEncoding::quality(Coding c) const {
  int own = c == Coding::gzip ? gzip : c == Coding::br ? br : c == Coding::zstd ? zstd : -1;
  if (own >= 0) return own;
  return any >= 0 ? any : 0;
}

AcceptEncoding parse_accept_encoding(std::string_view value) {
  AcceptEncoding ae;
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view element = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    size_t semi = element.find(';');
    std::string_view name = trim(element.substr(0, semi));
    if (name.empty()) continue;
    int q = semi == std::string_view::npos ? 1000 : element_quality(element.substr(semi + 1));
    if (q < 0) q = 0;
    int* slot = nullptr;
    if (iequals(name, "gzip") || iequals(name, "x-gzip")) slot = &ae.gzip;
    else if (iequals(name, "br")) slot = &ae.br;
    else if (iequals(name, "zstd")) slot = &ae.zstd;
    else if (name == "*") slot = &ae.any;
    // A coding listed twice keeps its highest q-value.
    if (slot && q > *slot) *slot = q;
  }
  return ae;
}

Coding choose(const AcceptEncoding& ae, const Offer& offer) {
  Coding best = Coding::identity;
  int best_q = 0;
  for (int i = 0; i < offer.count; ++i) {
    int q = ae.quality(offer.codings[i]);
    if (q > best_q) {
      best_q = q;
      best = offer.codings[i];
    }
  }
  return best;
}

}  // namespace torii::compression
