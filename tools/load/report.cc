#include "load/report.h"

#include <array>
#include <cinttypes>
#include <cmath>

namespace torii::load {

namespace {

struct Percentile {
  const char* label;  // text
  const char* key;    // JSON
  double p;
};
constexpr Percentile kPercentiles[] = {
    {"med", "med", 50}, {"p(90)", "p90", 90}, {"p(95)", "p95", 95}, {"p(99)", "p99", 99}, {"p(99.9)", "p99.9", 99.9},
};

constexpr std::array<double, 19> kCdfPoints = {0,  10, 25, 50, 60,   70,   75,   80,    85,   90,
                                                95, 97, 98, 99, 99.5, 99.7, 99.9, 99.95, 99.99};

std::string printf_string(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

const char* protocol_label(const RunResult& r) {
  const Stats& s = r.stats;
  if (r.options.protocol == Protocol::h3) return "HTTP/3";
  if (r.options.protocol == Protocol::hq) return "hq-interop";
  if (s.connects > 0) {
    if (s.connects_h2 == s.connects) return "HTTP/2";
    if (s.connects_h2 == 0) return "HTTP/1.1";
    return "HTTP/1.1 and HTTP/2";
  }
  switch (r.options.protocol) {
    case Protocol::h2: return "HTTP/2";
    case Protocol::h1: return "HTTP/1.1";
    case Protocol::h3: return "HTTP/3";
    case Protocol::hq: return "hq-interop";
    case Protocol::automatic: return r.options.urls[0].tls ? "by ALPN" : "HTTP/1.1";
  }
  return "";
}

double per_second(double n, double seconds) { return seconds > 0 ? n / seconds : 0; }

void line(std::FILE* out, const char* name, const std::string& value) {
  std::string dots(std::string_view(name).size() < 30 ? 30 - std::string_view(name).size() : 0, '.');
  std::fprintf(out, "     %s%s: %s\n", name, dots.c_str(), value.c_str());
}

void json_string(std::string& out, const char* s) {
  out += '"';
  for (; *s; ++s) {
    auto c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      out += printf_string("\\u%04x", c);
    } else {
      out += char(c);
    }
  }
  out += '"';
}

std::string number(double v) {
  if (!std::isfinite(v)) return "0";
  return printf_string("%.6g", v);
}

std::string ms(uint64_t ns) { return printf_string("%.3f", double(ns) / 1e6); }

}  // namespace

std::string format_duration(uint64_t ns) {
  double v = double(ns);
  if (ns < 1000) return printf_string("%" PRIu64 "ns", ns);
  if (ns < 1'000'000) return printf_string("%.2fµs", v / 1e3);
  if (ns < 1'000'000'000) return printf_string("%.2fms", v / 1e6);
  if (ns < 60'000'000'000) return printf_string("%.2fs", v / 1e9);
  return printf_string("%" PRIu64 "m%.0fs", ns / 60'000'000'000, std::fmod(v / 1e9, 60.0));
}

std::string format_bytes(double bytes) {
  if (bytes < 1000) return printf_string("%.0f B", bytes);
  if (bytes < 1e6) return printf_string("%.1f kB", bytes / 1e3);
  if (bytes < 1e9) return printf_string("%.1f MB", bytes / 1e6);
  return printf_string("%.2f GB", bytes / 1e9);
}

void print_summary(std::FILE* out, const RunResult& r) {
  const Stats& s = r.stats;
  const Histogram& h = s.latency;
  std::fprintf(out, "\n");
  line(out, "data_received",
       format_bytes(double(s.bytes_received)) + "  " + format_bytes(per_second(double(s.bytes_received), r.seconds)) + "/s");
  line(out, "data_sent",
       format_bytes(double(s.bytes_sent)) + "  " + format_bytes(per_second(double(s.bytes_sent), r.seconds)) + "/s");
  std::string d = "avg=" + format_duration(uint64_t(h.mean())) + " min=" + format_duration(h.min());
  for (const auto& p : kPercentiles) {
    d += std::string(" ") + p.label + "=" + format_duration(h.percentile(p.p));
    if (p.p == 50) d += " max=" + format_duration(h.max());
  }
  line(out, "http_req_duration", d);
  line(out, "http_req_failed",
       printf_string("%.2f%%  %" PRIu64 " out of %" PRIu64, s.requests ? 100.0 * double(s.failed) / double(s.requests) : 0.0,
                     s.failed, s.requests));
  std::string reqs = printf_string("%" PRIu64 "  %.1f/s", s.requests, per_second(double(s.requests), r.seconds));
  if (r.options.rate > 0) reqs += printf_string("  (target %.1f/s)", r.options.rate);
  line(out, "http_reqs", reqs);
  std::string status;
  for (size_t code = 0; code < s.status.size(); ++code) {
    if (s.status[code]) status += printf_string("%s%zu=%" PRIu64, status.empty() ? "" : " ", code, s.status[code]);
  }
  if (s.status_other) status += printf_string("%sother=%" PRIu64, status.empty() ? "" : " ", s.status_other);
  line(out, "status", status.empty() ? "none" : status);
  std::string errors;
  for (size_t k = 0; k < kErrorKinds; ++k) {
    if (!s.errors[k]) continue;
    errors += printf_string("%s%s=%" PRIu64 " (%s)", errors.empty() ? "" : " ", error_kind_name(ErrorKind(k)),
                            s.errors[k], s.first_error[k].data());
  }
  line(out, "errors", errors.empty() ? "none" : errors);
  std::string conns = printf_string("%" PRIu64 " opened, %" PRIu64 " failed, %s", s.connects, s.connect_failures,
                                    protocol_label(r));
  if (s.tls_handshakes) conns += printf_string(", TLS handshakes %" PRIu64 " (%" PRIu64 " resumed)", s.tls_handshakes, s.tls_resumed);
  line(out, "connections", conns);
  if (s.retried) line(out, "retried", printf_string("%" PRIu64 " (refused before processing, sent again)", s.retried));
  if (r.options.rate > 0) line(out, "not_sent_at_end", printf_string("%" PRIu64, s.waiting_at_end));
  line(out, "duration", printf_string("%.3fs", r.seconds));
  line(out, "load_cpu", printf_string("%.3fs  %.2fµs per request  %.0f%% of one core", s.cpu_seconds,
                                      s.requests ? s.cpu_seconds * 1e6 / double(s.requests) : 0.0,
                                      r.seconds > 0 ? 100.0 * s.cpu_seconds / r.seconds : 0.0));
}

std::string summary_json(const RunResult& r) {
  const Stats& s = r.stats;
  const Histogram& h = s.latency;
  const Options& o = r.options;
  std::string j = "{\n";
  j += "  \"duration_s\": " + number(r.seconds) + ",\n";
  j += "  \"connections\": " + std::to_string(o.connections) + ",\n";
  j += "  \"streams\": " + std::to_string(o.streams) + ",\n";
  j += "  \"threads\": " + std::to_string(o.threads) + ",\n";
  j += "  \"protocol\": ";
  json_string(j, protocol_label(r));
  j += ",\n  \"mode\": \"" + std::string(o.rate > 0 ? "open" : "closed") + "\",\n";
  j += "  \"target_rate\": " + (o.rate > 0 ? number(o.rate) : std::string("null")) + ",\n";
  j += "  \"http_reqs\": {\"count\": " + std::to_string(s.requests) +
       ", \"rate\": " + number(per_second(double(s.requests), r.seconds)) + "},\n";
  j += "  \"http_req_failed\": {\"rate\": " + number(s.requests ? double(s.failed) / double(s.requests) : 0.0) +
       ", \"count\": " + std::to_string(s.failed) + "},\n";
  j += "  \"http_req_duration\": {\"unit\": \"ms\", \"count\": " + std::to_string(h.count()) +
       ", \"avg\": " + printf_string("%.3f", h.mean() / 1e6) + ", \"min\": " + ms(h.min()) + ", \"max\": " + ms(h.max());
  for (const auto& p : kPercentiles) j += std::string(", \"") + p.key + "\": " + ms(h.percentile(p.p));
  j += "},\n";
  // Points of the latency distribution, [percentile, ms], for plotting a
  // CDF; dense in the tail, where servers differ.
  j += "  \"latency_cdf_ms\": [";
  for (size_t i = 0; i < kCdfPoints.size(); ++i) {
    j += printf_string("%s[%g, %s]", i ? ", " : "", kCdfPoints[i], ms(h.percentile(kCdfPoints[i])).c_str());
  }
  j += "],\n";
  j += "  \"data_received\": {\"bytes\": " + std::to_string(s.bytes_received) +
       ", \"rate\": " + number(per_second(double(s.bytes_received), r.seconds)) + "},\n";
  j += "  \"data_sent\": {\"bytes\": " + std::to_string(s.bytes_sent) +
       ", \"rate\": " + number(per_second(double(s.bytes_sent), r.seconds)) + "},\n";
  j += "  \"status\": {";
  bool first = true;
  for (size_t code = 0; code < s.status.size(); ++code) {
    if (!s.status[code]) continue;
    j += printf_string("%s\"%zu\": %" PRIu64, first ? "" : ", ", code, s.status[code]);
    first = false;
  }
  if (s.status_other) j += printf_string("%s\"other\": %" PRIu64, first ? "" : ", ", s.status_other);
  j += "},\n  \"errors\": {";
  for (size_t k = 0; k < kErrorKinds; ++k) {
    j += printf_string("%s\"%s\": %" PRIu64, k ? ", " : "", error_kind_name(ErrorKind(k)), s.errors[k]);
  }
  j += "},\n  \"error_messages\": {";
  first = true;
  for (size_t k = 0; k < kErrorKinds; ++k) {
    if (!s.errors[k]) continue;
    j += printf_string("%s\"%s\": ", first ? "" : ", ", error_kind_name(ErrorKind(k)));
    json_string(j, s.first_error[k].data());
    first = false;
  }
  j += "},\n";
  j += "  \"retried\": " + std::to_string(s.retried) + ",\n";
  j += "  \"not_sent_at_end\": " + std::to_string(s.waiting_at_end) + ",\n";
  j += "  \"connections_opened\": " + std::to_string(s.connects) + ",\n";
  j += "  \"connect_failures\": " + std::to_string(s.connect_failures) + ",\n";
  j += "  \"tls_handshakes\": " + std::to_string(s.tls_handshakes) + ",\n";
  j += "  \"tls_resumed\": " + std::to_string(s.tls_resumed) + ",\n";
  j += "  \"cpu_s\": " + number(s.cpu_seconds) + ",\n";
  j += "  \"cpu_us_per_request\": " + number(s.requests ? s.cpu_seconds * 1e6 / double(s.requests) : 0.0) + "\n";
  j += "}\n";
  return j;
}

}  // namespace torii::load
