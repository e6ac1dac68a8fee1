// http-core and gzip directives that nginx added late (max_headers,
// keepalive_min_timeout) or that old configs still carry
// (client_body_in_single_buffer, client_body_in_file_only,
// subrequest_output_buffer_size, gzip_no_buffer, postpone_gzipping,
// post_action, proxy_pass_trailers, early_hints, client_body_early_read,
// output_buffers, read_ahead, send_lowat), with nginx's contexts, defaults
// and error wording.
#include "config/directives.h"
#include "config/template.h"
#include "config/upstream_settings.h"

namespace torii::config {

namespace {

// nginx's wording for a value its number, size and time slots cannot read.
Error slot_error(const Node& n, const char* what) { return node_error(n, "\"" + n.name + "\" directive " + what); }

// max_headers N (http, server): the most header fields a request may have.
Status set_max_headers(Compiler&, Scope& s, const Node& n) {
  uint64_t v = 0;
  if (!parse_number(n.args[0], v)) return slot_error(n, "invalid number");
  s.server->max_headers = size_t(v);
  return Ok{};
}

Status set_keepalive_min_timeout(Compiler&, Scope& s, const Node& n) {
  int64_t ms = 0;
  if (!parse_time_ms(n.args[0], ms)) return slot_error(n, "invalid value");
  s.settings->core.keepalive_min_timeout = Ms(ms);
  return Ok{};
}

// client_body_in_file_only on | clean | off (nginx's enum slot wording).
Status set_client_body_in_file_only(Compiler&, Scope& s, const Node& n) {
  using B = CoreSettings::BodyInFileOnly;
  const std::string& v = n.args[0];
  if (v == "off") s.settings->core.client_body_in_file_only = B::off;
  else if (v == "on") s.settings->core.client_body_in_file_only = B::on;
  else if (v == "clean") s.settings->core.client_body_in_file_only = B::clean;
  else return node_error(n, "invalid value \"" + v + "\"");
  return Ok{};
}

Status set_subrequest_output_buffer_size(Compiler&, Scope& s, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return slot_error(n, "invalid value");
  s.settings->core.subrequest_output_buffer_size = size_t(v);
  return Ok{};
}

// client_body_in_single_buffer on|off: nginx keeps a body it reads into
// memory in one buffer, which only $request_body shows; torii has no
// $request_body and keeps a buffered body in one piece of memory (or one
// file) anyway, so the flag is read and changes nothing.
// gzip_no_buffer on|off: nginx hands each deflate output buffer on as soon
// as it is full instead of collecting gzip_buffers of them; the bytes the
// client gets are the same. torii's compression sink already passes output
// on whenever the handler pauses (end of the loop turn), so the flag is read
// and changes nothing.
Status accept_flag(Compiler&, Scope&, const Node&) { return Ok{}; }

// postpone_gzipping SIZE: nginx collects this much of the body before it
// starts deflate (a buffering detail: the encoded bytes are the same).
// torii encodes what each loop turn brings; the value is checked.
Status check_size(Compiler&, Scope&, const Node& n) {
  int64_t v = 0;
  if (!parse_size(n.args[0], v)) return slot_error(n, "invalid value");
  return Ok{};
}

// post_action URI | @name (modules/post_action). nginx's string slot: any
// value, a URI when it starts with '/', else a named location.
Status set_post_action(Compiler&, Scope& s, const Node& n) {
  s.settings->post_action = n.args[0];
  return Ok{};
}

// proxy_pass_trailers on|off (nginx 1.27.1): the upstream's chunked
// trailer fields go on to the client (handlers/proxy_http_codec.cc).
Status set_pass_trailers(Compiler&, Scope& s, const Node& n) {
  edit_upstream_settings(s, n.name).pass_trailers = n.args[0] == "on";
  return Ok{};
}

// nginx's predicate slot: COND..., each a string with variables.
// early_hints (nginx 1.29, modules/early_hints): the conditions under which
// an upstream's 103 goes on to the client. client_body_early_read (nginx
// 1.29, http and server only, modules/early_body): those under which the
// body is read before the location is chosen.
template <std::vector<Template> LocationSettings::*Field>
Status set_conditions(Compiler&, Scope& s, const Node& n) {
  std::vector<Template> conditions;
  for (const auto& a : n.args) {
    auto t = compile_template(a);
    if (!t) return node_error(n, t.error());
    conditions.push_back(std::move(*t));
  }
  s.settings->*Field = std::move(conditions);
  return Ok{};
}

constexpr uint16_t kHSL = kHttp | kServer | kLocation;

// output_buffers N SIZE: nginx's buffers for reading a file that does not
// leave by sendfile. torii reads such files in pieces of its own size
// (http1/output_queue, the HTTP/2 and HTTP/3 streams), so only a value
// other than nginx's default is worth a warning.
Status set_output_buffers(Compiler& c, Scope&, const Node& n) {
  uint64_t num = 0;
  int64_t size = 0;
  if (!parse_number(n.args[0], num) || num == 0 || !parse_size(n.args[1], size) || size <= 0)
    return slot_error(n, "invalid value");
  if (num != 2 || size != 32 * 1024)
    c.warn(n, "\"output_buffers\" has no effect: files that do not leave by sendfile are read in pieces of torii's own size");
  return Ok{};
}

// read_ahead SIZE: as nginx on Linux, a size above 0 only asks the kernel
// for sequential read-ahead on the files served (posix_fadvise).
Status set_read_ahead(Compiler&, Scope& s, const Node& n) {
  int64_t size = 0;
  if (!parse_size(n.args[0], size)) return slot_error(n, "invalid value");
  s.settings->read_ahead = size;
  return Ok{};
}

// send_lowat SIZE: Linux has no SO_SNDLOWAT for sending, so nginx built
// there warns about any value and ignores it; so does torii.
Status set_send_lowat(Compiler& c, Scope&, const Node& n) {
  int64_t size = 0;
  if (!parse_size(n.args[0], size)) return slot_error(n, "invalid value");
  c.warn(n, "\"send_lowat\" is not supported, ignored");
  return Ok{};
}

constexpr DirectiveSpec kCoreTuningDirectives[] = {
    {"output_buffers", kHSL, kArgs2, true, false, kMain, &set_output_buffers},
    {"read_ahead", kHSL, kArgs1, true, false, kMain, &set_read_ahead},
    {"send_lowat", kHSL, kArgs1, true, false, kMain, &set_send_lowat},
    {"max_headers", kHttp | kServer, kArgs1, true, false, kMain, &set_max_headers},
    {"keepalive_min_timeout", kHSL, kArgs1, true, false, kMain, &set_keepalive_min_timeout},
    {"client_body_in_file_only", kHSL, kArgs1, true, false, kMain, &set_client_body_in_file_only},
    {"client_body_in_single_buffer", kHSL, kFlag, true, false, kMain, &accept_flag},
    {"subrequest_output_buffer_size", kHSL, kArgs1, true, false, kMain, &set_subrequest_output_buffer_size},
    {"gzip_no_buffer", kHSL, kFlag, true, false, kMain, &accept_flag},
    {"postpone_gzipping", kHSL, kArgs1, true, false, kMain, &check_size},
    {"post_action", kHSL | kLocationIf, kArgs1, true, false, kMain, &set_post_action},
    {"proxy_pass_trailers", kHSL, kFlag, true, false, kMain, &set_pass_trailers},
    {"early_hints", kHSL, kArgs1More, true, false, kMain, &set_conditions<&LocationSettings::early_hints>},
    {"client_body_early_read", kHttp | kServer, kArgs1More, true, false, kMain,
     &set_conditions<&LocationSettings::client_body_early_read>},
};

}  // namespace

std::span<const DirectiveSpec> core_tuning_directives() { return kCoreTuningDirectives; }

}  // namespace torii::config
