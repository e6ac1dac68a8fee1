#include "http/special_response.h"

#include <strings.h>

#include "http/exchange.h"

namespace torii::http {

namespace {

// The codes nginx has a built-in page for; any other goes out with an
// empty body and no Content-Type. 425 and 431 are torii's own answers
// (early data, a header section too large: nginx's 400 there has a page),
// so they keep one.
bool has_builtin_page(int status) {
  switch (status) {
    case 301: case 302: case 303: case 307: case 308:
    case 421: case 425: case 429: case 431:
    case 494: case 495: case 496: case 497: case 498:
    case 507:
      return true;
    default:
      return (status >= 400 && status <= 416) || (status >= 500 && status <= 505);
  }
}

}  // namespace

void write_special_response(Exchange& ex, int status) {
  ResponseHead head = std::move(ex.response);
  head.status = status;
  bool has_page = has_builtin_page(status);
  if (has_page)  // an error page is HTML whatever an X-Accel-Redirect carried (its other fields stay, as nginx's)
    std::erase_if(ex.redirect_headers, [](const auto& h) { return strcasecmp(h.first.c_str(), "Content-Type") == 0; });
  if (!has_page) {
    if (status >= 300 && status != 304) head.remove("Content-Type");  // an empty error has no type
    head.content_length = status == 204 || status == 304 ? -1 : 0;
    ex.send_head(std::move(head));
    ex.finish();
    return;
  }
  // 497 is nginx's internal code for plain HTTP on a TLS port: error_page
  // may catch it; the client sees a 400 that says what happened.
  std::string_view detail;
  if (status == 497) {
    status = head.status = 400;
    detail = "The plain HTTP request was sent to HTTPS port";
  } else if (status == 494) {  // max_headers, as nginx's NGX_HTTP_REQUEST_HEADER_TOO_LARGE
    status = head.status = 400;
    detail = "Request Header Or Cookie Too Large";
  } else if (status == 495) {  // ssl_verify_client: the certificate did not verify
    status = head.status = 400;
    detail = "The SSL certificate error";
  } else if (status == 496) {  // ssl_verify_client on: no certificate
    status = head.status = 400;
    detail = "No required SSL certificate was sent";
  }
  std::string_view reason = reason_phrase(status);
  std::string_view sig = ex.server && !ex.settings().server_tokens ? "torii" : "torii/" TORII_VERSION;
  std::string body;
  body.reserve(200);
  body.append("<html>\r\n<head><title>").append(std::to_string(status)).append(" ");
  body.append(detail.empty() ? reason : detail);
  body.append("</title></head>\r\n<body>\r\n<center><h1>").append(std::to_string(status)).append(" ").append(reason);
  body.append("</h1></center>\r\n");
  if (!detail.empty()) body.append("<center>").append(detail).append("</center>\r\n");
  body.append("<hr><center>").append(sig).append("</center>\r\n</body>\r\n</html>\r\n");
  head.remove("Content-Type");
  head.remove("Content-Length");
  head.add("Content-Type", "text/html");
  head.content_length = int64_t(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

std::string absolute_location(const Exchange& ex, std::string_view url) {
  if (url.empty() || url[0] != '/') return std::string(url);
  const config::LocationSettings* s = ex.server ? &ex.settings() : nullptr;
  if (s && !s->absolute_redirect) return std::string(url);
  const auto& conn = ex.conn();
  std::string out = conn.tls ? "https://" : "http://";
  const bool by_name = s && s->server_name_in_redirect && !ex.server->names.empty() &&
                       ex.server->names[0].kind == config::ServerName::Kind::exact && !ex.server->names[0].name.empty();
  if (by_name) {
    out += ex.server->names[0].name;
  } else if (!ex.req.host.empty()) {
    out += ex.req.host;
  } else if (ex.server && !ex.server->names.empty() && !ex.server->names[0].name.empty() &&
             ex.server->names[0].kind == config::ServerName::Kind::exact) {
    out += ex.server->names[0].name;
  } else {
    // An IPv6 literal needs brackets in a URL authority.
    bool v6 = conn.server_addr.find(':') != std::string::npos;
    if (v6) out += '[';
    out += conn.server_addr;
    if (v6) out += ']';
  }
  uint16_t port = conn.server_port;
  if ((!s || s->port_in_redirect) && !((conn.tls && port == 443) || (!conn.tls && port == 80)))
    out += ":" + std::to_string(port);
  out += url;
  return out;
}

}  // namespace torii::http
