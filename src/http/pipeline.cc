#include "http/pipeline.h"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "cache/purge.h"
#include "modules/dav/dav.h"
#include "modules/dav_ext/dav_ext.h"
#include "modules/empty_gif/empty_gif.h"
#include "modules/flv/flv_handler.h"
#include "modules/mp4/mp4_handler.h"
#include "modules/slice/slice.h"
#include "modules/admin_api/api_handler.h"
#include "modules/metrics/metrics_handler.h"
#include "config/proxy_config.h"
#include "config/regex.h"
#include "config/cgi_config.h"
#include "handlers/gateway.h"
#include "handlers/memcached/memcached_handler.h"
#include "handlers/proxy.h"
#include "handlers/static_file.h"
#include "http/exchange.h"
#include "http/slash_redirect.h"
#include "http/special_response.h"
#include "http/variables.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "config/headers_more_config.h"
#include "modules/access/access_phase.h"
#include "modules/headers_more/headers_more.h"
#include "modules/client_cert/client_cert.h"
#include "modules/early_body/early_body.h"
#include "modules/mirror/mirror.h"
#include "modules/realip/realip.h"
#include "modules/rewrite/runner.h"
#include "modules/stub_status/stub_status.h"

namespace torii::http {

namespace {

constexpr int kMaxInternalRedirects = 10;

bool method_listed(const config::LimitExcept& le, Method m) {
  for (auto allowed : le.methods) {
    if (allowed == m) return true;
    if (allowed == Method::get && m == Method::head) return true;
  }
  return false;
}

// What the request learned of its file in the location it leaves: an
// index's directory must not stand for $request_filename of the index file.
void forget_mapped_file(Exchange& ex) {
  ex.request_filename.clear();
  ex.uri_added_to_alias = nullptr;
}

// Moves the exchange to `uri` ("/path?args"), as nginx's internal redirect.
void set_uri(Exchange& ex, std::string_view uri) {
  // The new URI's arguments replace the request's, none if it has none
  // (nginx's split_args for try_files and error_page; index, which keeps
  // them, appends them to the URI it passes).
  size_t q = uri.find('?');
  ex.req.path.assign(uri.substr(0, q));
  if (q != std::string_view::npos) {
    ex.redirect_args.assign(uri.substr(q + 1));
    ex.req.query = ex.redirect_args;
    ex.req.has_query = true;
  } else {
    ex.req.query = {};
    ex.req.has_query = false;
  }
  ex.is_internal = true;
  ex.location = nullptr;
  forget_mapped_file(ex);
  ex.captures = {};
  ex.response = ResponseHead();
}

// nginx's unsafe URI test (ngx_http_parse_unsafe_uri): a NUL, or ".." as
// a whole segment.
bool unsafe_path(std::string_view p) {
  if (p.empty() || p.find('\0') != std::string_view::npos) return true;
  if (p == ".." || p.starts_with("../")) return true;
  for (size_t i = p.find("/.."); i != std::string_view::npos; i = p.find("/..", i + 1))
    if (i + 3 == p.size() || p[i + 3] == '/') return true;
  return false;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding as nginx's unescape: a '%' not followed by two hex digits stays.
std::string percent_decoded(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int hi = in[i] == '%' && i + 2 < in.size() ? hex_value(in[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_value(in[i + 2]) : -1;
    if (lo < 0) {
      out.push_back(in[i]);
      continue;
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

bool is_redirect(int code) { return code == 301 || code == 302 || code == 303 || code == 307 || code == 308; }

}  // namespace

void send_return(Exchange& ex, const config::Return& ret) {
  if (ret.code == 444) {
    ex.status = 444;  // logged as such: the connection closes with no response
    ex.close_connection = true;
    return;
  }
  if (is_redirect(ret.code) && ret.has_text) {
    ex.response.set("Location", absolute_location(ex, render(ret.text, ex)));
    send_error(ex, ret.code);
    return;
  }
  // As nginx: an error or redirect code without text is an error (in an
  // error_page target its code becomes the status); anything else is a
  // response whose status error_page may still override.
  if (!ret.has_text && (ret.code >= 400 || is_redirect(ret.code))) {
    send_error(ex, ret.code);
    return;
  }
  std::string body = ret.has_text ? render(ret.text, ex) : std::string();
  ResponseHead head;
  head.status = ret.code;
  // nginx's header filter drops a 204's type (`location /favicon.ico {
  // return 204; }` names none).
  if (ret.code != 204) head.add("Content-Type", std::string(config::mime_type(ex.settings(), ex.req.path)));
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

namespace {

// A server chosen by a regular-expression server_name keeps that match's
// captures ($1.., named ones as variables), as nginx does.
void assign_server_name_captures(Exchange& ex) {
  if (!ex.server) return;
  bool has_regex = false;
  for (const auto& n : ex.server->names) {
    if (n.kind == config::ServerName::Kind::exact && n.name == ex.req.host) return;  // chosen by name
    has_regex = has_regex || n.kind == config::ServerName::Kind::regex;
  }
  if (!has_regex) return;
  for (const auto& n : ex.server->names) {
    if (n.kind != config::ServerName::Kind::regex || !n.regex) continue;
    if (!n.regex->match(ex.req.host, &ex.captures)) continue;
    if (!n.regex->named().empty()) rewrite::assign_named_captures(*n.regex, ex);
    return;
  }
}


// Server rewrite (when `server_phase`), location, location rewrite and
// the access phases for the current ex.req.path, looping on rewrites that
// change the URI. True: go on to the content handler; false: the request
// was answered or waits (a limit_req delay, an auth subrequest).
bool before_content(Exchange& ex, bool server_phase) {
  while (true) {
    if (server_phase) {
      server_phase = false;
      if (rewrite::run_server(ex) == rewrite::Outcome::responded) return false;
    }
    bool slash_redirect = false;
    if (!ex.location || ex.location->match != config::Location::Match::named) {
      ex.location = config::find_location(*ex.server, ex.req.path, &ex.captures, &slash_redirect);
      if (ex.location && ex.location->regex && !ex.location->regex->named().empty())
        rewrite::assign_named_captures(*ex.location->regex, ex);
    }
    if (ex.settings().internal && !ex.is_internal) {
      send_error(ex, 404);
      return false;
    }
    if (ex.settings().client_max_body_size > 0 && ex.req.content_length > ex.settings().client_max_body_size) {
      TORII_LOG_EX(ex, error, "client intended to send too large body: %lld bytes%s",
                static_cast<long long>(ex.req.content_length), log_context(ex).c_str());
      ex.close_connection = true;
      send_error(ex, 413);
      return false;
    }
    if (slash_redirect) {  // nginx's auto_redirect, after the same two checks
      send_slash_redirect(ex);
      return false;
    }
    // A method limit_except does not list runs under the limit_except
    // block's settings, as nginx's, which have no rewrite directives.
    const bool limited = ex.settings().limit_except && !method_listed(*ex.settings().limit_except, ex.req.method);
    if (limited) ex.location = ex.settings().limit_except->location.get();
    switch (limited ? rewrite::Outcome::proceed : rewrite::run_location(ex)) {
      case rewrite::Outcome::responded:
        return false;
      case rewrite::Outcome::uri_changed:
        if (++ex.internal_redirects > kMaxInternalRedirects) {
          TORII_LOG_EX(ex, error, "rewrite or internal redirection cycle while processing \"%s\"%s", ex.req.path.c_str(),
                    log_context(ex).c_str());
          send_error(ex, 500);
          return false;
        }
        ex.location = nullptr;
        continue;
      case rewrite::Outcome::proceed:
        break;
    }
    const auto& s = ex.settings();  // an `if` block's settings when one held
    // more_set_input_headers: the rewrite phase's last step (not for HTTP/0.9, as the module).
    if (s.headers_more && s.headers_more->has_input && ex.req.version >= 10) headers_more::apply_input(ex);
    realip::run(ex, s.realip.get());  // nginx's preaccess run, with the location's settings
    return access::run_access_phases(ex, Phase::start) == access::Gate::proceed;
  }
}

// Location phase onwards, for the current ex.req.path; loops on internal
// redirects (index, try_files, error_page). `from` is where a request
// that waited goes on (Phase::start for a new request or a redirect).
void route(Exchange& ex, Phase from) {
  // A redirect to a URI starts again at the server rewrite phase; one to a
  // named location goes straight to that location's rewrite phase.
  bool server_phase = !ex.location || ex.location->match != config::Location::Match::named;
  while (true) {
    const bool mirrored = from == Phase::mirrored;  // the mirror step ran here already
    if (from != Phase::start) {
      auto gate = access::run_access_phases(ex, from);
      from = Phase::start;
      if (gate != access::Gate::proceed) return;
    } else if (!before_content(ex, server_phase)) {
      return;
    }
    server_phase = false;
    // Precontent: dav_ext's lock checks, then mirror (it may first read the
    // request body), in nginx's order.
    if (!mirrored) {
      if (int locked = dav_ext::check_locks(ex)) {
        send_error(ex, locked);
        return;
      }
      if (mirror::run(ex) == mirror::Gate::wait) return;
    }
    ex.content_started = true;
    const auto& s = ex.settings();  // an `if` block's settings when one held
    if (s.metrics) {
      metrics::serve_metrics(ex);
      return;
    }
    if (s.api != config::LocationSettings::Api::off) {
      admin_api::serve_api(ex);
      return;
    }
    if (s.slice_size > 0 && !ex.slice_part) {
      slice::serve(ex);  // the response in parts, each through the handlers below
      return;
    }
    if (s.proxy && s.proxy->proxies()) {
      handlers::serve_proxy(ex);  // answers later, from the event loop
      return;
    }
    if (s.stub_status) {
      stub_status::serve(ex);
      return;
    }
    if (s.empty_gif) {
      empty_gif::serve(ex);
      return;
    }
    if (s.cache_purge_location) {
      cache::serve_purge_location(ex);  // proxy_cache_purge ZONE KEY
      return;
    }
    const bool passes = (s.fastcgi && s.fastcgi->passes()) || (s.uwsgi && s.uwsgi->passes()) ||
                        (s.grpc && s.grpc->passes()) || (s.memcached && s.memcached->passes());
    if (dav_ext::handles(ex) && !passes) {
      dav_ext::serve(ex);  // dav_ext_methods: PROPFIND, OPTIONS, LOCK, UNLOCK on the files
      return;
    }
    if (dav::handles(ex) && !passes) {
      dav::serve(ex);  // dav_methods: PUT, DELETE, MKCOL, COPY, MOVE on the files
      return;
    }
    // fastcgi_pass / uwsgi_pass (try_files first, then the session, which
    // answers later), else static files.
    auto result = s.fastcgi && s.fastcgi->passes() ? handlers::serve_fastcgi(ex)
                  : s.uwsgi && s.uwsgi->passes()   ? handlers::serve_uwsgi(ex)
                  : s.scgi && s.scgi->passes()     ? handlers::serve_scgi(ex)
                  : s.grpc && s.grpc->upstream.upstream     ? handlers::serve_grpc(ex)
                  : s.memcached && s.memcached->upstream.upstream ? handlers::serve_memcached(ex)
                  : s.pseudo_streaming == config::PseudoStreaming::flv ? flv::serve(ex)
                  : s.pseudo_streaming == config::PseudoStreaming::mp4 ? mp4::serve(ex)
                                                            : handlers::serve_static(ex);
    switch (result.kind) {
      case handlers::HandlerResult::Kind::responded:
        return;
      case handlers::HandlerResult::Kind::status:
        send_error(ex, result.status);
        return;
      case handlers::HandlerResult::Kind::internal_redirect:
        if (++ex.internal_redirects > kMaxInternalRedirects) {
          TORII_LOG_EX(ex, error, "rewrite or internal redirection cycle while internally redirecting to \"%s\"%s",
                    result.uri.c_str(), log_context(ex).c_str());
          send_error(ex, 500);
          return;
        }
        if (!result.uri.empty() && result.uri[0] == '@') {
          // try_files ... @name: continue in the named location.
          const config::Location* named = config::find_named_location(*ex.server, result.uri);
          if (!named) {
            TORII_LOG_EX(ex, error, "could not find named location \"%s\"%s", result.uri.c_str(), log_context(ex).c_str());
            send_error(ex, 500);
            return;
          }
          ex.is_internal = true;
          ex.location = named;
          forget_mapped_file(ex);
          continue;
        }
        set_uri(ex, result.uri);
        server_phase = true;
        continue;
    }
  }
}

// From the post-read phase on, once the head is in (and, with
// client_body_early_read, the body).
void after_head(Exchange& ex) {
  realip::run(ex, ex.server->settings.realip.get());  // nginx's post-read run, with the server's settings
  assign_server_name_captures(ex);
  route(ex, Phase::start);
}

const config::ErrorPage* find_error_page(const config::LocationSettings& s, int status) {
  for (const auto& ep : s.error_pages) {
    if (std::find(ep.codes.begin(), ep.codes.end(), status) != ep.codes.end()) return &ep;
  }
  return nullptr;
}

}  // namespace

void accel_redirect(Exchange& ex, std::string_view target) {
  if (++ex.internal_redirects > kMaxInternalRedirects) {
    TORII_LOG_EX(ex, error, "rewrite or internal redirection cycle while internally redirecting to \"%.*s\"%s",
              int(target.size()), target.data(), log_context(ex).c_str());
    send_error(ex, 500);
    return;
  }
  if (!target.empty() && target[0] == '@') {
    const config::Location* named = config::find_named_location(*ex.server, target);
    if (!named) {
      TORII_LOG_EX(ex, error, "could not find named location \"%.*s\"%s", int(target.size()), target.data(),
                log_context(ex).c_str());
      send_error(ex, 500);
      return;
    }
    ex.is_internal = true;
    ex.location = named;
    forget_mapped_file(ex);
    ex.captures = {};
    route(ex, Phase::start);
    return;
  }
  const size_t q = target.find('?');
  std::string path = percent_decoded(target.substr(0, q));
  if (q == 0 || unsafe_path(target.substr(0, q)) || unsafe_path(path)) {
    TORII_LOG_EX(ex, error, "unsafe URI \"%.*s\" was detected%s", int(target.size()), target.data(), log_context(ex).c_str());
    send_error(ex, 404);
    return;
  }
  if (ex.req.method != Method::head) {
    ex.req.method = Method::get;
    ex.req.method_name = "GET";
  }
  ex.req.path = std::move(path);
  // The target's arguments replace the request's, even when it has none.
  ex.redirect_args.assign(q == std::string_view::npos ? std::string_view() : target.substr(q + 1));
  ex.req.query = ex.redirect_args;
  ex.req.has_query = q != std::string_view::npos;
  ex.is_internal = true;
  ex.location = nullptr;
  forget_mapped_file(ex);
  ex.captures = {};
  ex.response = ResponseHead();
  route(ex, Phase::start);
}

void run_request(Exchange& ex) {
  ex.count_request();
  if (ex.req.method == Method::head) ex.header_only = true;
  if (ex.req.method == Method::trace) {
    // As nginx: TRACE would echo the request (cookies, credentials) back,
    // so it is refused for every request, proxied or not, before any
    // location or handler runs. nginx decides keep-alive only after this
    // check, so the connection ends with the 405.
    TORII_LOG_EX(ex, info, "client sent TRACE method%s", log_context(ex).c_str());
    ex.close_connection = true;
    send_error(ex, 405);
    return;
  }
  if (ex.in_early_data() && !is_idempotent(ex.req.method)) {
    // TLS early data can be replayed: only what may safely run twice runs (RFC 8470).
    send_error(ex, 425);
    return;
  }
  if (int refused = client_cert::check(ex)) {  // ssl_verify_client, judged for the request's server
    send_error(ex, refused);
    return;
  }
  // client_body_early_read: the body first, under the server's settings.
  if (early_body::start(ex, &after_head)) return;
  after_head(ex);
}

void resume_request(Exchange& ex, Phase at) { route(ex, at); }

void send_error(Exchange& ex, int status) {
  ex.count_request();  // a request the codec refused is a request too
  if (ex.head_sent()) {
    ex.close_connection = true;  // too late for another response: cut it short
    return;
  }
  if (status == 444) {
    ex.status = 444;
    ex.close_connection = true;
    return;
  }
  // As nginx: these errors end keep-alive, the connection state is suspect.
  if (status == 400 || status == 413 || status == 414 || status == 431 || status == 494 || status == 495 || status == 496 ||
      status == 497 || status == 500 ||
      status == 501 || status == 505) {
    ex.close_connection = true;
  }
  const config::ErrorPage* ep = ex.server ? find_error_page(ex.settings(), status) : nullptr;
  // As nginx, the location where the error happened says whether its
  // error_page target's own errors are redirected in turn.
  if (ep && (!ex.in_error_page || ex.error_pages_recursive)) {
    ex.in_error_page = true;
    ex.error_pages_recursive = ex.settings().recursive_error_pages;
    if (ex.internal_redirects >= kMaxInternalRedirects) {
      ex.error_pages_recursive = false;
      TORII_LOG_EX(ex, error, "rewrite or internal redirection cycle while internally redirecting to \"%s\"%s",
                   render(ep->uri, ex).c_str(), log_context(ex).c_str());
      ex.status_override = 0;
      write_special_response(ex, 500);
      return;
    }
    ++ex.internal_redirects;
    std::string uri = render(ep->uri, ex);
    // As nginx: a 401's challenge (auth_basic's, auth_request's, an
    // intercepted upstream's) goes along with the page or the redirect
    // that error_page answers instead (Authelia's `error_page 401 =302
    // $redirection_url`).
    std::string challenge;
    if (const std::string* c = ex.response.find("WWW-Authenticate")) challenge = *c;
    auto keep_challenge = [&ex, &challenge] {
      if (!challenge.empty()) ex.response.set("WWW-Authenticate", challenge);
    };
    if (uri.rfind("http://", 0) == 0 || uri.rfind("https://", 0) == 0) {
      // An external page: redirect the client to it.
      int code = ep->response_code > 0 && is_redirect(ep->response_code) ? ep->response_code : 302;
      ex.response = ResponseHead();
      keep_challenge();
      ex.response.set("Location", uri);
      ex.status_override = 0;
      write_special_response(ex, code);
      return;
    }
    int override_status = ep->response_code == -1 ? status : ep->response_code;  // 0: the target's own
    if (ex.req.method != Method::head) {
      ex.req.method = Method::get;
      ex.req.method_name = "GET";
    }
    if (!uri.empty() && uri[0] == '@') {
      const config::Location* named = config::find_named_location(*ex.server, uri);
      if (!named) {
        TORII_LOG_EX(ex, error, "could not find named location \"%s\"%s", uri.c_str(), log_context(ex).c_str());
        write_special_response(ex, 500);
        return;
      }
      ex.is_internal = true;
      ex.response = ResponseHead();
      ex.location = named;
      forget_mapped_file(ex);
    } else {
      set_uri(ex, uri);
    }
    keep_challenge();
    ex.status_override = override_status;
    route(ex, Phase::start);
    return;
  }
  // As nginx's err_status: an error met while serving an error_page target
  // (a bare `return 418`, a redirect, the page's own 404) is the status now,
  // whatever the error_page line asked for.
  ex.status_override = 0;
  write_special_response(ex, status);
}

}  // namespace torii::http
