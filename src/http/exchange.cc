#include "http/exchange.h"
#include "http/field_bytes.h"

#include <strings.h>

#include <cstdio>

#include "config/compression_config.h"
#include "config/headers_more_config.h"
#include "http/date.h"
#include "modules/compression/compression_filter.h"
#include "modules/expires/expires_filter.h"
#include "modules/limit_rate/limit_rate.h"
#include "modules/stub_status/counters.h"
#include "http/variables.h"
#include "http/filter_status.h"
#include "http/log_context.h"
#include "modules/charset/charset_filter.h"
#include "modules/charset/charset_sink.h"
#include "modules/early_hints/early_hints.h"
#include "modules/headers_more/headers_more.h"
#include "modules/image_filter/image_filter.h"
#include "modules/sub/sub_filter.h"
#include "modules/addition/addition_filter.h"
#include "modules/ssi/ssi_filter.h"
#include "modules/trailers/add_trailer.h"
#include "modules/userid/userid.h"
#include "log/error_log.h"

namespace torii::http {

Exchange::~Exchange() {
  if (counted_) stub_status::add(stub_status::Counter::writing, -1);
}

void Exchange::count_request() {
  // A subrequest (auth_request, SSI, addition) is not a client's request:
  // nginx's counters leave it out.
  if (counted_ || access.subrequest) return;
  counted_ = true;
  stub_status::add(stub_status::Counter::requests, 1);
  stub_status::add(stub_status::Counter::writing, 1);
}

void Exchange::set_real_client(std::unique_ptr<ConnectionInfo> client) {
  real_client_ = std::move(client);
  client_ = real_client_.get();
}

void Exchange::send_head(ResponseHead head) {
  if (head_sent_) return;
  head_sent_ = true;
  if (status_override > 0) head.status = status_override;
  status = head.status;
  // After a 101 the body is the tunnelled stream.
  if (req.method == Method::head || status == 204 || status == 304 || (status < 200 && status != 101)) header_only = true;
  if (status == 204 || status == 304) head.content_length = -1;
  if (slice_part) {
    response = std::move(head);
    sink_.send_head(response);
    return;
  }

  // What an X-Accel-Redirect carried over: the upstream's Content-Type
  // wins over the target's, as nginx sets a type only where none is.
  for (auto& [name, value] : redirect_headers) {
    if (strcasecmp(name.c_str(), "Content-Type") == 0)
      head.set(std::move(name), std::move(value));
    else
      head.add(std::move(name), std::move(value));
  }
  redirect_headers.clear();
  // A page that error_page serves for a 401 carries the 401's challenge,
  // which send_error kept in `response` (special responses start from it).
  if (in_error_page && !head.find("WWW-Authenticate"))
    if (const std::string* challenge = response.find("WWW-Authenticate")) head.add("WWW-Authenticate", *challenge);
  if (head.accel_charset.empty()) head.accel_charset = std::move(redirect_charset);
  redirect_charset.clear();

  const auto& s = settings();
  int64_t now_sec = start_unix_ms / 1000;
  if (now_sec == 0) now_sec = time(nullptr);

  // Header filters, in nginx's order: headers-more's response rules,
  // expires and add_header, then the codec-independent fields every
  // response carries.
  head_in_filters = &head;
  headers_more::OwnFields own;
  if (s.headers_more && s.headers_more->has_output) headers_more::apply_output(*this, head, own);
  own_server_ = own.server;
  own_date_ = own.date;
  if (filter_status(status)) expires::apply(s.expires, *this, now_sec, head);
  // The fields added below and Server, Date (and Alt-Svc) in one growth at most.
  const bool alt_svc = req.version != 30 && server && !server->alt_svc.empty();
  head.headers.reserve(head.headers.size() + s.add_headers.size() + 2 + size_t(alt_svc));
  for (const auto& h : s.add_headers) {
    if (!h.always && !filter_status(status)) continue;
    std::string value;
    render(h.value, *this, value);
    line_breaks_to_spaces(value);
    // The response's own validators are replaced, not doubled, and an
    // empty value removes them (nginx's set handlers for these two).
    if (h.kind == config::AddHeader::Kind::validator) head.remove(h.name);
    if (value.empty()) continue;  // nginx skips a header whose value is empty
    // One Content-Type per response: a configured one replaces the default.
    if (h.kind == config::AddHeader::Kind::content_type) head.remove("Content-Type");
    head.add(h.name, std::move(value));
  }
  if (s.userid) userid::header_filter(*this, head);  // after add_header, as nginx's filter order
  expect_trailers_ = trailers::expect(*this, head);
  head_in_filters = nullptr;
  // A server that also answers HTTP/3 says where on its TCP responses
  // (RFC 7838 Alt-Svc), so browsers move over; `http3_alt_svc off` stops it.
  if (alt_svc && !head.find("Alt-Svc"))
    head.add("Alt-Svc", server->alt_svc);
  // The image filter holds the head until the image is in (its type and
  // length change), then passes one on through the filters below.
  if (s.image_filter && image_filter::hold_head(*this, head)) return;
  pass_head_on(std::move(head));
}

void Exchange::pass_head_on(ResponseHead head) {
  const auto& s = settings();
  status = head.status;
  int64_t now_sec = start_unix_ms / 1000;
  if (now_sec == 0) now_sec = time(nullptr);
  if (!head.accel_charset.empty()) {
    static const std::vector<std::string> kNone;
    if (!charset::apply_override(head.accel_charset, config ? config->charsets : kNone, status, head))
      TORII_LOG_EX(*this, error, "unknown charset \"%s\" to override%s", head.accel_charset.c_str(), log_context(*this).c_str());
  }
  // charset: names it in the type, and recodes the body where a charset_map
  // joins the body's charset and it. Subrequests (SSI includes) are left
  // as they are: their bytes join the page's.
  std::shared_ptr<charset::CharsetSink> charset_filter;
  if (head.accel_charset.empty() && !s.charset.empty() && subrequest_depth == 0)
    charset_filter = charset::header_filter(*this, head);
  // Compression last among the filters: it judges the head as the others left it.
  // The upstream's X-Accel-Limit-Rate sets $limit_rate, then the pace is
  // fixed for the response (not for a 101's tunnel).
  if (head.accel_limit_rate >= 0) access.limit_rate = head.accel_limit_rate;
  // A subrequest's body goes into its parent's: paced and compressed there.
  if (status != 101 && subrequest_depth == 0) rate_filter = limits::make_rate_sink(*this, sink_);
  // The addition, sub and SSI filters judge the head before compression
  // (they take the length away), in nginx's order, and their body filters
  // sit in front of compression's in the same order.
  std::shared_ptr<http::ResponseSink> addition_filter = s.ssi ? addition::header_filter(*this, head) : nullptr;
  std::shared_ptr<sub::SubSink> sub_filter = s.sub_filter ? sub::header_filter(*this, head) : nullptr;
  std::shared_ptr<ssi::SsiSink> ssi_filter = s.ssi ? ssi::header_filter(*this, head) : nullptr;
  if (s.compression && subrequest_depth == 0) body_filter = compression::header_filter(*this, head, below());
  if (ssi_filter) body_filter = ssi::attach(std::move(ssi_filter), std::move(body_filter), below());
  if (charset_filter) body_filter = charset::attach(std::move(charset_filter), std::move(body_filter), below());
  if (sub_filter) body_filter = sub::attach(std::move(sub_filter), std::move(body_filter), below());
  if (addition_filter) body_filter = addition::attach(std::move(addition_filter), std::move(body_filter), below());
  // Ours go first, unless the upstream's were passed (proxy_pass_header).
  const bool own_server = own_server_ && (!head.has_upstream_server_or_date || head.find("Server") == nullptr);
  const bool own_date = own_date_ && (!head.has_upstream_server_or_date || head.find("Date") == nullptr);
  head.headers.insert(head.headers.begin(), size_t(own_server) + size_t(own_date), {});
  size_t at = 0;
  if (own_server) head.headers[at++] = {"Server", s.server_tokens ? "torii/" TORII_VERSION : "torii"};
  if (own_date) head.headers[at] = {"Date", std::string(cached_http_date(now_sec))};

  response = std::move(head);
  sink_.send_head(response);
}

void Exchange::send_early_hints(const ResponseHead& hints) {
  if (head_sent_ || subrequest_depth > 0 || access.subrequest || background || !server) return;
  if (!early_hints::wanted(*this)) return;
  sink_.send_interim(hints);
}

void Exchange::send_body(std::string_view data) {
  if (header_only || finished_ || data.empty()) return;
  if (body_filter) return body_filter->send_body(data);
  below().send_body(data);
}

void Exchange::send_file(std::shared_ptr<const OpenFile> file, int64_t offset, int64_t length) {
  if (header_only || finished_ || length <= 0) return;
  if (body_filter) return body_filter->send_file(std::move(file), offset, length);
  below().send_file(std::move(file), offset, length);
}

void Exchange::finish() {
  if (finished_) return;
  if (expect_trailers_) trailers::render(*this, trailers_);
  if (!trailers_.empty()) sink_.set_trailers(std::move(trailers_));
  if (body_filter) return body_filter->finish();  // it calls finish_filtered() when its output is out
  if (rate_filter) return rate_filter->finish();  // it calls finish_paced() when the last byte left it
  finished_ = true;
  sink_.finish();
}

void Exchange::finish_filtered() {
  if (finished_) return;
  if (rate_filter) return rate_filter->finish();
  finished_ = true;
  sink_.finish();
}

void Exchange::finish_paced() {
  if (finished_) return;
  finished_ = true;
  sink_.finish();
}

void Exchange::client_gone() {
  if (!head_sent_ && status == 0) status = 499;  // nginx's "client closed request"
  if (handler_state) handler_state->on_client_gone();
}

void Exchange::abort() {
  if (finished_) return;
  finished_ = true;
  close_connection = true;
  if (body_filter) body_filter->abort();
  if (rate_filter) rate_filter->abort();
  sink_.abort();
}

void Exchange::log_body_timeout() const {
  TORII_LOG(info, "client timed out (110: Connection timed out) while reading client request body, client: %s",
            conn_.remote_addr.c_str());
}

}  // namespace torii::http
