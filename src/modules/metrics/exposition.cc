#include "modules/metrics/exposition.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "cache/metrics.h"
#include "config/upstream_config.h"
#include "modules/metrics/text_format.h"
#include "modules/metrics/worker_metrics.h"
#include "http3/quic_counters.h"
#include "modules/stub_status/counters.h"
#include "net/tls_counters.h"
#include "upstream/live_group.h"
#include "upstream/peer_stats.h"

namespace torii::metrics {

namespace {

constexpr const char* kProtocolNames[kProtocols] = {"HTTP/1.0", "HTTP/1.1", "HTTP/2.0", "HTTP/3.0"};

void number(std::string& out, uint64_t v) { out += std::to_string(v); }

void seconds(std::string& out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  out += buf;
}

struct Summed {
  std::array<uint64_t, kDurationBuckets.size() + 1> buckets{};
  uint64_t count = 0, sum_us = 0;
  void add(const Histogram& h) {
    for (size_t i = 0; i < buckets.size(); ++i) buckets[i] += h.buckets[i].get();
    count += h.count.get();
    sum_us += h.sum_us.get();
  }
};

void histogram(std::string& out, const char* name, const char* help, const Summed& h) {
  head(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.buckets.size(); ++i) {
    cumulative += h.buckets[i];
    out += name;
    out += "_bucket{le=\"";
    if (i < kDurationBuckets.size()) {
      seconds(out, kDurationBuckets[i]);
    } else {
      out += "+Inf";
    }
    out += "\"} ";
    number(out, cumulative);
    out += '\n';
  }
  out += name;
  out += "_sum ";
  seconds(out, double(h.sum_us) / 1e6);
  out += '\n';
  out += name;
  out += "_count ";
  number(out, h.count);
  out += '\n';
}

}  // namespace

std::string render_prometheus(const config::Config& cfg) {
  std::string out;
  out.reserve(8192);
  auto workers = all_workers();

  // requests by server, status class and protocol
  std::map<std::string, std::array<std::array<uint64_t, kStatusClasses>, kProtocols>> requests;
  Summed duration, upstream;
  uint64_t bytes_in = 0, bytes_out = 0;
  std::array<uint64_t, kConnectionProtocols> connections{};
  for (WorkerMetrics* w : workers) {
    for (size_t p = 0; p < connections.size(); ++p) connections[p] += w->connections[p].get();
    {
      std::lock_guard lock(w->mu);
      for (const auto& [name, c] : w->servers) {
        auto& row = requests[name];
        for (int p = 0; p < kProtocols; ++p)
          for (int s = 0; s < kStatusClasses; ++s) row[size_t(p)][size_t(s)] += c->requests[p][s].get();
      }
    }
    duration.add(w->request_duration);
    upstream.add(w->upstream_duration);
    bytes_in += w->bytes_in.get();
    bytes_out += w->bytes_out.get();
  }

  head(out, "torii_http_requests_total", "counter", "Requests answered, by server, status class and protocol.");
  for (const auto& [name, row] : requests) {
    for (int p = 0; p < kProtocols; ++p) {
      for (int s = 0; s < kStatusClasses; ++s) {
        if (!row[size_t(p)][size_t(s)]) continue;
        out += "torii_http_requests_total{server=\"";
        label_value(out, name);
        out += "\",status=\"";
        out += char('1' + s);
        out += "xx\",protocol=\"";
        out += kProtocolNames[p];
        out += "\"} ";
        number(out, row[size_t(p)][size_t(s)]);
        out += '\n';
      }
    }
  }
  histogram(out, "torii_http_request_duration_seconds",
            "Time from a request's first byte to its log line.", duration);
  histogram(out, "torii_upstream_response_duration_seconds",
            "Time of the last upstream try of proxied requests, connect to last byte.", upstream);
  head(out, "torii_http_received_bytes_total", "counter", "Request bytes received: line, headers and body.");
  out += "torii_http_received_bytes_total ";
  number(out, bytes_in);
  out += '\n';
  head(out, "torii_http_sent_bytes_total", "counter", "Response bytes sent: head and body.");
  out += "torii_http_sent_bytes_total ";
  number(out, bytes_out);
  out += '\n';

  // The servers as they are now: the admin API's snapshot where the
  // config has the API, else the config's.
  std::vector<std::shared_ptr<const config::UpstreamGroupConfig>> groups;
  for (const auto& g : cfg.upstreams)
    if (!g->implicit) groups.push_back(g->live ? g->live->snapshot() : g);
  auto server_labels = [&](const config::UpstreamGroupConfig& g, const config::UpstreamServer& s) {
    out += "{upstream=\"";
    label_value(out, g.name);
    out += "\",server=\"";
    label_value(out, s.name);
    out += '"';
  };
  {
    static constexpr const char* kReq[] = {"passed", "delayed", "rejected", "delayed_dry_run", "rejected_dry_run"};
    static constexpr const char* kConn[] = {"passed", "rejected", "rejected_dry_run"};
    uint64_t req[std::size(kReq)] = {}, conn[std::size(kConn)] = {};
    for (WorkerMetrics* w : workers) {
      for (size_t i = 0; i < std::size(kReq); ++i) req[i] += w->limit_req[i].get();
      for (size_t i = 0; i < std::size(kConn); ++i) conn[i] += w->limit_conn[i].get();
    }
    head(out, "torii_limit_req_requests_total", "counter", "Requests limit_req judged, by outcome ($limit_req_status).");
    for (size_t i = 0; i < std::size(kReq); ++i) {
      out += "torii_limit_req_requests_total{status=\"";
      out += kReq[i];
      out += "\"} ";
      number(out, req[i]);
      out += '\n';
    }
    head(out, "torii_limit_conn_requests_total", "counter", "Requests limit_conn judged, by outcome ($limit_conn_status).");
    for (size_t i = 0; i < std::size(kConn); ++i) {
      out += "torii_limit_conn_requests_total{status=\"";
      out += kConn[i];
      out += "\"} ";
      number(out, conn[i]);
      out += '\n';
    }
  }

  head(out, "torii_upstream_server_up", "gauge",
       "1 when the server may take requests (not down or draining, active health check passing), else 0.");
  for (const auto& g : groups) {
    for (size_t i = 0; i < g->servers.size(); ++i) {
      const auto& s = g->servers[i];
      bool up = !s.down && !s.drain && (!g->health || g->health->up(i));
      out += "torii_upstream_server_up";
      server_labels(*g, s);
      out += "} ";
      out += up ? '1' : '0';
      out += '\n';
    }
  }
  head(out, "torii_upstream_server_state", "gauge",
       "1 for the server's state: up, down, draining (admin API), unhealthy (active health check failing).");
  for (const auto& g : groups) {
    for (size_t i = 0; i < g->servers.size(); ++i) {
      const auto& s = g->servers[i];
      const bool healthy = !g->health || g->health->up(i);
      const char* now = s.down ? "down" : s.drain ? "draining" : !healthy ? "unhealthy" : "up";
      for (const char* st : {"up", "down", "draining", "unhealthy"}) {
        out += "torii_upstream_server_state";
        server_labels(*g, s);
        out += ",state=\"";
        out += st;
        out += "\"} ";
        out += std::string_view(st) == now ? '1' : '0';
        out += '\n';
      }
    }
  }
  head(out, "torii_upstream_health_check_passing", "gauge",
       "The active health check's last verdict for the server (groups with health_check only).");
  for (const auto& g : groups) {
    if (!g->health) continue;
    for (size_t i = 0; i < g->servers.size() && i < g->health->size(); ++i) {
      out += "torii_upstream_health_check_passing";
      server_labels(*g, g->servers[i]);
      out += "} ";
      out += g->health->up(i) ? '1' : '0';
      out += '\n';
    }
  }
  head(out, "torii_upstream_resolved_addresses", "gauge",
       "Addresses a `server NAME resolve` line has now (the servers labelled with them above).");
  for (const auto& g : groups) {
    for (size_t t = 0; t < g->resolves.size(); ++t) {
      const auto n = std::count_if(g->servers.begin(), g->servers.end(),
                                   [&](const config::UpstreamServer& s) { return s.resolve_index == int(t); });
      out += "torii_upstream_resolved_addresses{upstream=\"";
      label_value(out, g->name);
      out += "\",name=\"";
      label_value(out, g->resolves[t].written);
      out += "\"} ";
      number(out, uint64_t(n));
      out += '\n';
    }
  }
  // Per-server counters exist where the admin API keeps them (the config
  // has an `api` location or admin_listen).
  struct PeerCounter {
    const char* name;
    const char* type;
    const char* help;
  };
  const PeerCounter peer_counters[] = {
      {"torii_upstream_server_requests_total", "counter", "Tries sent to the server (admin API groups)."},
      {"torii_upstream_server_fails_total", "counter", "Tries to the server that failed (admin API groups)."},
      {"torii_upstream_server_active", "gauge", "Requests using the server now (admin API groups)."},
      {"torii_upstream_server_responses_total", "counter", "Response heads from the server by status class (admin API groups)."},
  };
  for (size_t k = 0; k < std::size(peer_counters); ++k) {
    head(out, peer_counters[k].name, peer_counters[k].type, peer_counters[k].help);
    for (const auto& g : groups) {
      if (!g->stats) continue;
      for (const auto& s : g->servers) {
        const upstream::PeerStats& st = g->stats->at(s.id);
        if (k == 3) {
          for (int c = 0; c < 5; ++c) {
            out += peer_counters[k].name;
            server_labels(*g, s);
            out += ",status=\"" + std::to_string(c + 1) + "xx\"} ";
            number(out, st.responses[c].load(std::memory_order_relaxed));
            out += '\n';
          }
          continue;
        }
        out += peer_counters[k].name;
        server_labels(*g, s);
        out += "} ";
        if (k == 0) number(out, st.requests.load(std::memory_order_relaxed));
        if (k == 1) number(out, st.fails.load(std::memory_order_relaxed));
        if (k == 2) out += std::to_string(st.active.load(std::memory_order_relaxed));
        out += '\n';
      }
    }
  }

  // Client connections, from the counters stub_status keeps (per thread, summed here).
  const stub_status::Totals conns = stub_status::totals();
  head(out, "torii_connections", "gauge",
       "Open client connections by state: reading a request head, writing a response, waiting (idle keep-alive).");
  const std::pair<const char*, int64_t> by_state[] = {
      {"reading", conns.reading}, {"writing", conns.writing}, {"waiting", conns.waiting()}};
  for (const auto& [st, n] : by_state) {
    out += "torii_connections{state=\"";
    out += st;
    out += "\"} ";
    out += std::to_string(n);
    out += '\n';
  }
  head(out, "torii_tls_handshakes_total", "counter",
       "TLS handshakes over TCP by outcome: completed, or the reason they failed.");
  const auto tls = net::tls_handshake_totals();
  for (size_t i = 0; i < tls.size(); ++i) {
    out += "torii_tls_handshakes_total{outcome=\"";
    out += net::kTlsOutcomeNames[i];
    out += "\"} ";
    number(out, tls[i]);
    out += '\n';
  }
  head(out, "torii_connections_by_protocol_total", "counter",
       "Client connections by protocol: HTTP/1 at its first request, HTTP/2 when it starts, HTTP/3 and "
       "hq-interop when the QUIC handshake completes.");
  constexpr const char* kConnectionProtocolNames[kConnectionProtocols] = {"HTTP/1", "HTTP/2", "HTTP/3", "hq-interop"};
  for (size_t p = 0; p < connections.size(); ++p) {
    out += "torii_connections_by_protocol_total{protocol=\"";
    out += kConnectionProtocolNames[p];
    out += "\"} ";
    number(out, connections[p]);
    out += '\n';
  }
  head(out, "torii_quic_handshakes_total", "counter",
       "QUIC handshakes by outcome: completed, or failed (the connection ended first).");
  out += "torii_quic_handshakes_total{outcome=\"completed\"} ";
  number(out, http3::total(http3::QuicEvent::handshake_completed));
  out += "\ntorii_quic_handshakes_total{outcome=\"failed\"} ";
  number(out, http3::total(http3::QuicEvent::handshake_failed));
  out += '\n';
  head(out, "torii_quic_datagrams_handed_total", "counter",
       "QUIC datagrams one worker read for a connection another owns and handed to it (a client that moved; "
       "none with quic_bpf on, where the kernel steers them).");
  out += "torii_quic_datagrams_handed_total ";
  number(out, http3::total(http3::QuicEvent::datagram_handed));
  out += '\n';
  head(out, "torii_connections_accepted_total", "counter", "Client connections accepted.");
  out += "torii_connections_accepted_total ";
  out += std::to_string(conns.accepted);
  out += '\n';
  head(out, "torii_connections_handled_total", "counter", "Accepted connections taken on (not refused at worker_connections).");
  out += "torii_connections_handled_total ";
  out += std::to_string(conns.handled);
  out += '\n';

  head(out, "torii_reloads_total", "counter", "Reloads asked for (SIGHUP).");
  out += "torii_reloads_total ";
  number(out, reloads_total());
  out += '\n';
  head(out, "torii_reload_failures_total", "counter", "Reloads whose config was refused (the old one stayed).");
  out += "torii_reload_failures_total ";
  number(out, reload_failures_total());
  out += '\n';
  head(out, "torii_config_generation", "gauge", "Configs loaded since start: 1, then one more per successful reload.");
  out += "torii_config_generation ";
  number(out, config_generation());
  out += '\n';
  cache::render_metrics(cfg, out);
  return out;
}

}  // namespace torii::metrics
