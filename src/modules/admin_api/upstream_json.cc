#include "modules/admin_api/upstream_json.h"

#include "config/directives.h"
#include "upstream/peer_stats.h"

namespace torii::admin_api {

namespace {

void key(std::string& out, std::string_view k) {
  append_json_string(out, k);
  out += ':';
}

std::string duration(config::Ms ms) {
  const auto n = ms.count();
  return n % 1000 == 0 ? std::to_string(n / 1000) + "s" : std::to_string(n) + "ms";
}

const char* state_of(const config::UpstreamGroupConfig& g, size_t i) {
  const auto& s = g.servers[i];
  if (s.down) return "down";
  if (s.drain) return "draining";
  if (g.health && i < g.health->size() && !g.health->up(i)) return "unhealthy";
  return "up";
}

void append_peer(std::string& out, const config::UpstreamGroupConfig& g, size_t i) {
  const auto& s = g.servers[i];
  out += '{';
  key(out, "id");
  out += std::to_string(s.id) + ',';
  key(out, "server");
  append_json_string(out, s.name);
  out += ',';
  key(out, "name");
  append_json_string(out, s.host.empty() ? s.name : s.host);  // a resolved address: its name, as NGINX Plus
  out += ',';
  key(out, "backup");
  out += s.backup ? "true," : "false,";
  key(out, "weight");
  out += std::to_string(s.weight) + ',';
  key(out, "state");
  append_json_string(out, state_of(g, i));
  out += ',';
  key(out, "max_conns");
  out += std::to_string(s.max_conns);
  if (g.stats) {
    const upstream::PeerStats& st = g.stats->at(s.id);
    const auto load = [](const auto& a) { return std::to_string(a.load(std::memory_order_relaxed)); };
    out += ',';
    key(out, "active");
    out += load(st.active) + ',';
    key(out, "requests");
    out += load(st.requests) + ',';
    key(out, "responses");
    out += '{';
    uint64_t total = 0;
    for (int c = 0; c < 5; ++c) {
      const uint64_t n = st.responses[c].load(std::memory_order_relaxed);
      total += n;
      key(out, std::to_string(c + 1) + "xx");
      out += std::to_string(n) + ',';
    }
    key(out, "total");
    out += std::to_string(total) + "},";
    key(out, "fails");
    out += load(st.fails);
  }
  if (g.health_check) {
    out += ',';
    key(out, "health_checks");
    out += '{';
    key(out, "last_passed");
    out += g.health && i < g.health->size() && g.health->up(i) ? "true" : "false";
    out += '}';
  }
  out += '}';
}

Error field_error(std::string_view field, std::string_view why) {
  return Error{"the \"" + std::string(field) + "\" field " + std::string(why)};
}

Result<unsigned> read_count(std::string_view field, const JsonValue& v, unsigned min) {
  uint64_t n = 0;
  if (v.type != JsonValue::Type::number || !config::parse_number(v.text, n) || n < min || n > 1'000'000)
    return field_error(field, "must be an integer from " + std::to_string(min) + " to 1000000");
  return unsigned(n);
}

Result<bool> read_flag(std::string_view field, const JsonValue& v) {
  if (v.type != JsonValue::Type::boolean) return field_error(field, "must be true or false");
  return v.boolean;
}

}  // namespace

void append_upstream(std::string& out, const config::UpstreamGroupConfig& group) {
  out += '{';
  key(out, "peers");
  out += '[';
  for (size_t i = 0; i < group.servers.size(); ++i) {
    if (i) out += ',';
    append_peer(out, group, i);
  }
  out += "],";
  key(out, "keepalive");
  out += std::to_string(group.keepalive) + ',';
  key(out, "zombies");
  out += "0,";
  key(out, "zone");
  append_json_string(out, group.name);
  out += '}';
}

void append_server(std::string& out, const config::UpstreamServer& s) {
  out += '{';
  key(out, "id");
  out += std::to_string(s.id) + ',';
  key(out, "server");
  append_json_string(out, s.name);
  out += ',';
  key(out, "weight");
  out += std::to_string(s.weight) + ',';
  key(out, "max_conns");
  out += std::to_string(s.max_conns) + ',';
  key(out, "max_fails");
  out += std::to_string(s.max_fails) + ',';
  key(out, "fail_timeout");
  append_json_string(out, duration(s.fail_timeout));
  out += ',';
  key(out, "slow_start");
  out += "\"0s\",";
  key(out, "route");
  out += "\"\",";
  key(out, "backup");
  out += s.backup ? "true," : "false,";
  key(out, "down");
  out += s.down ? "true," : "false,";
  key(out, "drain");
  out += s.drain ? "true" : "false";
  if (s.resolve_index >= 0) {
    // An address of a `server NAME resolve` line: it follows its name.
    out += ',';
    key(out, "resolve");
    out += "true,";
    key(out, "name");
    append_json_string(out, s.host);
  }
  out += '}';
}

void append_servers(std::string& out, const config::UpstreamGroupConfig& group) {
  out += '[';
  for (size_t i = 0; i < group.servers.size(); ++i) {
    if (i) out += ',';
    append_server(out, group.servers[i]);
  }
  out += ']';
}

Result<upstream::ServerChange> read_server_change(const JsonValue& body, long id) {
  if (body.type != JsonValue::Type::object) return Error{"the body must be a JSON object"};
  upstream::ServerChange c;
  for (const auto& [name, v] : body.members) {
    if (name == "server") {
      if (v.type != JsonValue::Type::string || v.text.empty()) return field_error(name, "must be a non-empty string");
      c.server = v.text;
    } else if (name == "weight") {
      auto n = read_count(name, v, 1);
      if (!n) return Error{n.error()};
      c.weight = *n;
    } else if (name == "max_conns" || name == "max_fails") {
      auto n = read_count(name, v, 0);
      if (!n) return Error{n.error()};
      (name == "max_conns" ? c.max_conns : c.max_fails) = *n;
    } else if (name == "fail_timeout") {
      int64_t ms = 0;
      // "10s" as NGINX Plus writes it, or a number of seconds.
      std::string text = v.type == JsonValue::Type::number ? v.text : v.type == JsonValue::Type::string ? v.text : "";
      if (text.empty() || !config::parse_time_ms(text, ms)) return field_error(name, "must be a time such as \"10s\"");
      c.fail_timeout_ms = ms;
    } else if (name == "backup" || name == "down" || name == "drain") {
      auto f = read_flag(name, v);
      if (!f) return Error{f.error()};
      (name == "backup" ? c.backup : name == "down" ? c.down : c.drain) = *f;
    } else if (name == "id") {
      // A PATCH may send back what GET gave, id included, when it matches.
      uint64_t n = 0;
      if (id < 0 || v.type != JsonValue::Type::number || !config::parse_number(v.text, n) || long(n) != id)
        return field_error(name, "cannot be set");
    } else if (name == "slow_start" || name == "route") {
      // NGINX Plus's; accepted only as the values torii has (none).
      const bool none = v.type == JsonValue::Type::string && (v.text.empty() || v.text == "0" || v.text == "0s");
      if (!none) return field_error(name, "is not supported");
    } else {
      return Error{"unknown field \"" + name + "\""};
    }
  }
  return c;
}

}  // namespace torii::admin_api
