#include "modules/admin_api/api_handler.h"

#include <strings.h>

#include <memory>
#include <string>
#include <vector>

#include "config/directives.h"
#include "core/event_loop.h"
#include "http/exchange.h"
#include "modules/admin_api/json.h"
#include "modules/admin_api/upstream_json.h"
#include "upstream/live_group.h"

namespace torii::admin_api {

namespace {

constexpr size_t kMaxBody = 64 * 1024;  // a server's settings are a few hundred bytes
constexpr int kVersion = 9;             // NGINX Plus's API version whose shape this follows

void respond(http::Exchange& ex, int status, const std::string& body,
             std::vector<std::pair<std::string, std::string>> extra = {}) {
  http::ResponseHead head;
  head.status = status;
  head.add("Content-Type", "application/json");
  head.add("Cache-Control", "no-store");
  for (auto& [k, v] : extra) head.add(k, v);
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

void respond_error(http::Exchange& ex, int status, std::string_view code, std::string_view text,
                   std::vector<std::pair<std::string, std::string>> extra = {}) {
  std::string body = "{\"error\":{\"status\":" + std::to_string(status) + ",\"text\":";
  append_json_string(body, text);
  body += ",\"code\":";
  append_json_string(body, code);
  body += "}}";
  respond(ex, status, body, std::move(extra));
}

// Equal strings in a time that does not depend on where they differ.
bool same_token(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= uint8_t(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

// 401 without credentials, 403 with wrong ones (RFC 6750 3.1).
bool authorized(http::Exchange& ex) {
  const std::string& token = ex.config->admin_token;
  if (token.empty()) return true;
  const http::Header* auth = ex.req.find("authorization");
  std::string_view v = auth ? auth->value : std::string_view();
  if (v.size() < 7 || strncasecmp(v.data(), "Bearer ", 7) != 0) {
    respond_error(ex, 401, "Unauthorized", "a bearer token is required",
                  {{"WWW-Authenticate", "Bearer realm=\"torii admin\""}});
    return false;
  }
  v.remove_prefix(7);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  if (!same_token(v, token)) {
    respond_error(ex, 403, "Forbidden", "the bearer token is not valid",
                  {{"WWW-Authenticate", "Bearer realm=\"torii admin\", error=\"invalid_token\""}});
    return false;
  }
  return true;
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view part = path.substr(0, slash);
    if (!part.empty()) out.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

std::shared_ptr<const config::UpstreamGroupConfig> find_upstream(const config::Config& cfg, std::string_view name) {
  for (const auto& u : cfg.upstreams)
    if (!u->implicit && u->live && u->name == name) return u;
  return nullptr;
}

bool parse_id(std::string_view s, unsigned& id) {
  uint64_t n = 0;
  if (!config::parse_number(s, n) || n > 0xffffffffu) return false;
  id = unsigned(n);
  return true;
}

// One API request, once its body (if any) has been read.
struct Request {
  http::Method method;
  std::vector<std::string> path;  // the segments after the location's prefix
  std::string body;
  bool writable = false;
};

void method_not_allowed(http::Exchange& ex, bool writable, const char* allow) {
  if (!writable) {
    respond_error(ex, 405, "MethodDisabled", "the API is read-only here (api write=off)");
  } else {
    respond_error(ex, 405, "MethodNotSupported", "method not supported", {{"Allow", allow}});
  }
}

bool is_read(http::Method m) { return m == http::Method::get || m == http::Method::head; }

void answer_servers(http::Exchange& ex, const Request& r, const config::UpstreamGroupConfig& loaded) {
  upstream::LiveGroup& live = *loaded.live;
  const bool one = r.path.size() == 6;
  unsigned id = 0;
  if (one && !parse_id(r.path[5], id)) {
    respond_error(ex, 400, "UpstreamBadServerId", "invalid server id");
    return;
  }
  if (is_read(r.method)) {
    auto snap = live.snapshot();
    std::string body;
    if (!one) {
      append_servers(body, *snap);
    } else {
      const config::UpstreamServer* found = nullptr;
      for (const auto& s : snap->servers)
        if (s.id == id) found = &s;
      if (!found) {
        respond_error(ex, 404, "UpstreamServerNotFound", "server not found");
        return;
      }
      append_server(body, *found);
    }
    respond(ex, 200, body);
    return;
  }
  const bool write = one ? (r.method == http::Method::patch || r.method == http::Method::del)
                         : r.method == http::Method::post;
  if (!write || !r.writable) {
    method_not_allowed(ex, r.writable, one ? "GET, HEAD, PATCH, DELETE" : "GET, HEAD, POST");
    return;
  }
  upstream::LiveGroup::Outcome out;
  if (r.method == http::Method::del) {
    out = live.remove(id);
  } else {
    auto json = parse_json(r.body);
    if (!json) {
      respond_error(ex, 400, "JsonError", json.error());
      return;
    }
    auto change = read_server_change(*json, one ? long(id) : -1);
    if (!change) {
      respond_error(ex, 400, "UpstreamConfFormatError", change.error());
      return;
    }
    out = one ? live.patch(id, *change) : live.add(*change);
  }
  if (out.error) {
    respond_error(ex, out.error->status, out.error->code, out.error->text);
    return;
  }
  std::string body;
  if (r.method == http::Method::del) {
    append_servers(body, *live.snapshot());  // what is left, as NGINX Plus answers
  } else {
    append_server(body, out.server);
  }
  respond(ex, r.method == http::Method::post ? 201 : 200, body);
}

void answer(http::Exchange& ex, const Request& r) {
  const auto& p = r.path;
  if (!is_read(r.method) && !(p.size() >= 5 && p[1] == "http" && p[2] == "upstreams" && p[4] == "servers")) {
    method_not_allowed(ex, r.writable, "GET, HEAD");
    return;
  }
  if (p.empty()) {
    respond(ex, 200, "[" + std::to_string(kVersion) + "]");
    return;
  }
  if (p[0] != std::to_string(kVersion)) {
    respond_error(ex, 404, "UnknownVersion", "unknown API version");
    return;
  }
  if (p.size() == 1) {
    respond(ex, 200, "[\"http\"]");
    return;
  }
  if (p[1] != "http") {
    respond_error(ex, 404, "PathNotFound", "path not found");
    return;
  }
  if (p.size() == 2) {
    respond(ex, 200, "[\"upstreams\"]");
    return;
  }
  if (p[2] != "upstreams") {
    respond_error(ex, 404, "PathNotFound", "path not found");
    return;
  }
  if (p.size() == 3) {
    std::string body = "{";
    bool first = true;
    for (const auto& u : ex.config->upstreams) {
      if (u->implicit || !u->live) continue;
      if (!first) body += ',';
      first = false;
      append_json_string(body, u->name);
      body += ':';
      append_upstream(body, *u->live->snapshot());
    }
    body += '}';
    respond(ex, 200, body);
    return;
  }
  auto loaded = find_upstream(*ex.config, p[3]);
  if (!loaded) {
    respond_error(ex, 404, "UpstreamNotFound", "upstream not found");
    return;
  }
  if (p.size() == 4) {
    std::string body;
    append_upstream(body, *loaded->live->snapshot());
    respond(ex, 200, body);
    return;
  }
  if (p[4] != "servers" || p.size() > 6) {
    respond_error(ex, 404, "PathNotFound", "path not found");
    return;
  }
  answer_servers(ex, r, *loaded);
}

// Reads a POST or PATCH body, then answers at the end of the loop turn
// (never inside the codec's callback, which may end the exchange).
class BodyRead : public http::Exchange::HandlerState, public http::BodyReader {
 public:
  BodyRead(http::Exchange& ex, Request r) : ex_(ex), r_(std::move(r)) {}

  bool on_body_data(std::string_view data) override {
    if (too_large_) return true;
    if (r_.body.size() + data.size() > kMaxBody) {
      too_large_ = true;
      return true;  // the rest is read and dropped; the answer is 413
    }
    r_.body.append(data);
    return true;
  }
  void on_body_end() override {
    if (ended_) return;
    ended_ = true;
    std::weak_ptr<char> alive = alive_;
    http::Exchange* ex = &ex_;
    ex_.services().loop->defer([ex, alive, this] {
      if (alive.expired() || ex->finished() || ex->head_sent()) return;
      if (too_large_) {
        respond_error(*ex, 413, "BodyTooLarge", "the request body is larger than 64k");
      } else {
        answer(*ex, r_);
      }
    });
  }

 private:
  http::Exchange& ex_;
  Request r_;
  bool too_large_ = false;
  bool ended_ = false;
  std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace

void serve_api(http::Exchange& ex) {
  if (!authorized(ex)) return;
  Request r;
  r.method = ex.req.method;
  r.writable = ex.settings().api == config::LocationSettings::Api::read_write;
  // The path below the location's prefix: "/api/9/http/upstreams" under
  // `location /api/` is 9/http/upstreams.
  std::string_view path = ex.req.path;
  if (ex.location && ex.location->match != config::Location::Match::regex &&
      ex.location->match != config::Location::Match::regex_icase && path.size() >= ex.location->pattern.size())
    path.remove_prefix(ex.location->pattern.size());
  for (auto s : segments(path)) r.path.emplace_back(s);
  if (!ex.has_body()) {
    answer(ex, r);
    return;
  }
  auto reader = std::make_unique<BodyRead>(ex, std::move(r));
  BodyRead* raw = reader.get();
  ex.handler_state = std::move(reader);
  ex.read_body(raw);
}

}  // namespace torii::admin_api
