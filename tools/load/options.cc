#include "load/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace torii::load {

const char* const kUsage =
    "usage: torii-load [options] URL...\n"
    "  -c, --connections N     connections in all (default 10)\n"
    "  -m, --streams N         concurrent requests per connection: HTTP/2 or HTTP/3\n"
    "                          streams, or the HTTP/1.1 pipeline depth (default 1)\n"
    "  -t, --threads N         threads, one event loop each (default 1)\n"
    "  -d, --duration T        run for T (10, 10s, 500ms, 2m; default 10s)\n"
    "  -n, --requests N        send exactly N requests, then stop\n"
    "      --rate R            open loop: R requests per second in all, latency\n"
    "                          measured from when each request was due\n"
    "      --h1 | --h2 | --h3  protocol (default: HTTP/1.1 for http://, ALPN for https://;\n"
    "                          --h2 on http:// is h2c with prior knowledge; --h3 is\n"
    "                          HTTP/3 over QUIC, one UDP socket per connection,\n"
    "                          https:// only)\n"
    "      --hq                HTTP/0.9 over QUIC (ALPN hq-interop): each stream sends\n"
    "                          \"GET /path\\r\\n\" and reads the body to its FIN; no\n"
    "                          headers, and a response has no status (counted as 0)\n"
    "  -H, --header 'N: V'     add a request header (repeatable)\n"
    "      --method M          request method (default GET)\n"
    "      --body FILE         request body, sent with every request\n"
    "      --connect-per-request  a new connection (and TLS handshake) per request\n"
    "      --no-tls-resume     full TLS handshakes (no session resumption; QUIC\n"
    "                          handshakes are always full)\n"
    "      --timeout T         a request without its response after T fails (default 10s)\n"
    "      --json FILE         write the summary as JSON to FILE\n"
    "      --save DIR          write each response's body to DIR/1, DIR/2... (QUIC only),\n"
    "                          numbered in the order the responses complete\n"
    "  -h, --help              this text\n"
    "Several URLs share one host and port; requests cycle through them.\n"
    "Server certificates are not verified (TLS and QUIC alike): a load tool measures,\n"
    "it does not authenticate. SNI is the URL's host unless it is an address.\n";

namespace {

Result<uint64_t> parse_count(std::string_view name, const std::string& text, uint64_t min,
                             uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return make_error(std::string(name) + ": expected a whole number from " + std::to_string(min) +
                      " to " + std::to_string(max) + ", got '" + text + "'");
  }
  return value;
}

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  }
  return out;
}

Result<std::pair<std::string, std::string>> parse_header(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return make_error("-H: expected 'name: value', got '" + text + "'");
  std::string name = text.substr(0, colon);
  std::string_view value(text);
  value.remove_prefix(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (!is_token(name)) return make_error("-H: bad header name '" + name + "'");
  for (char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return make_error("-H: header value has a line break or NUL: '" + text + "'");
  }
  std::string lname = lower(name);
  if (lname == "content-length" || lname == "transfer-encoding")
    return make_error("-H: " + name + " is set from --body, not by hand");
  return std::pair{name, std::string(value)};
}

}  // namespace

Result<int64_t> parse_duration(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, size_t(text.data() + text.size() - end));
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1e9;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "m") {
    scale = 60e9;
  } else if (unit == "h") {
    scale = 3600e9;
  }
  if (ec != std::errc() || scale == 0 || !(value > 0) || value * scale > 1e18 || end == text.data())
    return make_error("expected a duration such as 10, 10s, 500ms, 2m or 1h, got '" + text + "'");
  return int64_t(std::llround(value * scale));
}

Result<Options> parse_options(int argc, char** argv) {
  Options o;
  bool have_duration = false, have_requests = false, have_protocol = false;
  std::vector<std::string> urls;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline = false;
    // --name=value and -cVALUE forms as well as separate arguments.
    if (arg.starts_with("--")) {
      if (size_t eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline = true;
      }
    } else if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-') {
      value = arg.substr(2);
      arg = arg.substr(0, 2);
      has_inline = true;
    }
    auto take_value = [&]() -> Result<std::string> {
      if (has_inline) return value;
      if (i + 1 >= argc) return make_error(arg + ": needs a value");
      return std::string(argv[++i]);
    };
    auto flag = [&]() -> Status {
      if (has_inline) return make_error(arg + ": takes no value");
      return Ok{};
    };
#define TAKE(var)                                  \
  auto var##_r = take_value();                     \
  if (!var##_r) return make_error(var##_r.error()); \
  const std::string& var = *var##_r
#define FLAG()                                     \
  if (auto f = flag(); !f) return make_error(f.error())

    if (arg == "-h" || arg == "--help") {
      FLAG();
      o.help = true;
      return o;
    } else if (arg == "-c" || arg == "--connections") {
      TAKE(v);
      auto n = parse_count("-c", v, 1, 100'000);
      if (!n) return make_error(n.error());
      o.connections = unsigned(*n);
    } else if (arg == "-m" || arg == "--streams") {
      TAKE(v);
      auto n = parse_count("-m", v, 1, 1024);
      if (!n) return make_error(n.error());
      o.streams = unsigned(*n);
    } else if (arg == "-t" || arg == "--threads") {
      TAKE(v);
      auto n = parse_count("-t", v, 1, 1024);
      if (!n) return make_error(n.error());
      o.threads = unsigned(*n);
    } else if (arg == "-d" || arg == "--duration") {
      TAKE(v);
      auto d = parse_duration(v);
      if (!d) return make_error("-d: " + d.error());
      o.duration_ns = *d;
      have_duration = true;
    } else if (arg == "-n" || arg == "--requests") {
      TAKE(v);
      auto n = parse_count("-n", v, 1, UINT64_MAX / 2);
      if (!n) return make_error(n.error());
      o.requests = *n;
      have_requests = true;
    } else if (arg == "--rate") {
      TAKE(v);
      double r = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), r);
      if (ec != std::errc() || end != v.data() + v.size() || !(r > 0) || !std::isfinite(r) || r > 1e9)
        return make_error("--rate: expected requests per second above 0, got '" + v + "'");
      o.rate = r;
    } else if (arg == "--h1" || arg == "--h2" || arg == "--h3" || arg == "--hq") {
      FLAG();
      Protocol p = arg == "--h1"   ? Protocol::h1
                   : arg == "--h2" ? Protocol::h2
                   : arg == "--h3" ? Protocol::h3
                                   : Protocol::hq;
      if (have_protocol && o.protocol != p) return make_error("--h1, --h2, --h3 and --hq exclude each other");
      o.protocol = p;
      have_protocol = true;
    } else if (arg == "-H" || arg == "--header") {
      TAKE(v);
      auto h = parse_header(v);
      if (!h) return make_error(h.error());
      o.headers.push_back(std::move(*h));
    } else if (arg == "--method") {
      TAKE(v);
      if (!is_token(v)) return make_error("--method: bad method '" + v + "'");
      o.method = v;
    } else if (arg == "--body") {
      TAKE(v);
      if (v.empty()) return make_error("--body: needs a file name");
      o.body_file = v;
    } else if (arg == "--connect-per-request") {
      FLAG();
      o.connect_per_request = true;
    } else if (arg == "--no-tls-resume") {
      FLAG();
      o.tls_resume = false;
    } else if (arg == "--timeout") {
      TAKE(v);
      auto d = parse_duration(v);
      if (!d) return make_error("--timeout: " + d.error());
      o.timeout_ns = *d;
    } else if (arg == "--save") {
      TAKE(v);
      if (v.empty()) return make_error("--save: needs a directory");
      o.save_dir = v;
    } else if (arg == "--json") {
      TAKE(v);
      if (v.empty()) return make_error("--json: needs a file name");
      o.json_file = v;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return make_error("unknown option " + arg);
    } else {
      urls.push_back(argv[i]);
    }
#undef TAKE
#undef FLAG
  }

  if (have_duration && have_requests) return make_error("-d and -n exclude each other");
  if (urls.empty()) return make_error("no URL given");
  for (const auto& text : urls) {
    auto url = parse_url(text);
    if (!url) return make_error(url.error());
    if (!o.urls.empty()) {
      const Url& first = o.urls.front();
      if (url->tls != first.tls || url->host != first.host || url->port != first.port)
        return make_error("all URLs must share one scheme, host and port: " + text);
    }
    o.urls.push_back(std::move(*url));
  }
  if (o.threads > o.connections) return make_error("-t: more threads than connections (-c)");
  if (o.protocol == Protocol::h3 && !o.urls[0].tls) return make_error("--h3: HTTP/3 needs an https:// URL");
  if (o.protocol == Protocol::hq) {
    if (!o.urls[0].tls) return make_error("--hq: hq-interop needs an https:// URL");
    if (o.method != "GET" || !o.body_file.empty() || !o.headers.empty())
      return make_error("--hq: HTTP/0.9 sends GET alone (no --method, --body or -H)");
  }
  if (!o.save_dir.empty() && !over_quic(o.protocol)) return make_error("--save: only with --h3 or --hq");

  if (o.connect_per_request && o.streams > 1)
    return make_error("--connect-per-request sends one request per connection; -m must be 1");
  bool h2_possible = o.protocol == Protocol::h2 || over_quic(o.protocol) ||
                     (o.protocol == Protocol::automatic && o.urls[0].tls);
  for (const auto& [name, value] : o.headers) {
    std::string lname = lower(name);
    if (h2_possible && (lname == "connection" || lname == "keep-alive" || lname == "upgrade" ||
                        lname == "proxy-connection")) {
      return make_error("-H: " + name + " is a connection-specific field, not allowed in HTTP/2 or HTTP/3");
    }
  }
  return o;
}

}  // namespace torii::load
