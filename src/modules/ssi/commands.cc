// The SSI commands (nginx's ngx_http_ssi_module): include, echo, config,
// set, if/elif/else/endif, block/endblock, with nginx's checks of their
// parameters and of where a command may stand, and its error messages.
#include <ctime>
#include <string>

#include "core/event_loop.h"
#include "http/log_context.h"
#include "log/error_log.h"
#include "modules/ssi/expression.h"
#include "modules/ssi/include_uri.h"
#include "modules/ssi/request_variable.h"
#include "modules/ssi/ssi_sink.h"

namespace torii::ssi {

namespace {

// nginx stops nesting at 50 levels; a page whose includes include
// themselves several times over stops at kMaxSubrequests in all.
constexpr int kMaxDepth = 50;
constexpr int kMaxSubrequests = 1000;

enum class Name : unsigned char { include, echo, config, set, if_, elif, else_, endif, block, endblock };

struct Spec {
  std::string_view name;
  Name id;
  int conditional;  // 0: anywhere; 1: after if/elif; 2: after if/elif/else
  bool ends_block;  // runs while a block is being recorded
  std::string_view params[5];
  std::string_view mandatory[2];
};

constexpr Spec kCommands[] = {
    {"include", Name::include, 0, false, {"virtual", "file", "wait", "set", "stub"}, {}},
    {"echo", Name::echo, 0, false, {"var", "default", "encoding"}, {"var"}},
    {"config", Name::config, 0, false, {"errmsg", "timefmt"}, {}},
    {"set", Name::set, 0, false, {"var", "value"}, {"var", "value"}},
    {"if", Name::if_, 0, false, {"expr"}, {"expr"}},
    {"elif", Name::elif, 1, false, {"expr"}, {"expr"}},
    {"else", Name::else_, 1, false, {}, {}},
    {"endif", Name::endif, 2, false, {}, {}},
    {"block", Name::block, 0, false, {"name"}, {"name"}},
    {"endblock", Name::endblock, 0, true, {}, {}},
};

const Spec* find(std::string_view name) {
  for (const auto& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c | 0x20);
  return out;
}

// The command as it was written, for a block that records it.
std::string reconstruct(const Command& cmd) {
  std::string out = "<!--#" + cmd.name;
  for (const auto& p : cmd.params) out += " " + p.name + "=\"" + p.value + "\"";
  return out + " -->";
}

// What a stub's commands print, kept for the page.
struct Capture final : http::ResponseSink {
  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view data) override { out.append(data); }
  void send_file(std::shared_ptr<const http::OpenFile>, int64_t, int64_t) override {}
  void finish() override { done = true; }
  std::string out;
  bool done = false;
};

}  // namespace

// A stub goes out as nginx sends it, through an SSI filter of its own (its
// commands run, with a fresh if/encoding state and the page's variables).
// What an include inside it would add is not waited for.
std::string SsiSink::render_stub(const std::string& block) {
  auto capture = std::make_shared<Capture>();
  auto inner = std::make_shared<SsiSink>(ex_, cfg_, main_);
  inner->attach(capture, *capture);
  inner->send_body(block);
  inner->finish();
  if (!capture->done)
    TORII_LOG_EX(ex_, warn, "an include inside an SSI stub is not waited for%s", http::log_context(ex_).c_str());
  ex_.services().loop->defer([inner, capture] {});
  return std::move(capture->out);
}

void SsiSink::text(std::string_view plain) {
  if (plain.empty()) return;
  if (output_on_) {
    output_.push_text(plain);
  } else if (in_block_ && !main_->blocks.empty()) {
    main_->blocks.back().content.append(plain);
  }
}

void SsiSink::error_message() {
  if (!cfg_.silent_errors) output_.push_text(errmsg_);
}

void SsiSink::run(const Command& cmd) {
  const std::string log = http::log_context(ex_);
  const Spec* spec = find(cmd.name);
  if (!spec) {
    if (!output_on_) return;
    TORII_LOG(error, "invalid SSI command: \"%s\"%s", cmd.name.c_str(), log.c_str());
    return error_message();
  }
  if (!output_on_ && !spec->ends_block) {
    if (in_block_) {
      if (!main_->blocks.empty()) main_->blocks.back().content += reconstruct(cmd);
      return;
    }
    if (spec->conditional == 0) return;
  }
  if (spec->conditional && (conditional_ == 0 || conditional_ > spec->conditional)) {
    TORII_LOG(error, "invalid context of SSI command: \"%s\"%s", cmd.name.c_str(), log.c_str());
    return error_message();
  }
  if (cmd.too_many_params) {
    TORII_LOG(error, "too many SSI command parameters: \"%s\"%s", cmd.name.c_str(), log.c_str());
    return error_message();
  }
  // Each parameter by its place in the command's list.
  const std::string* values[5] = {};
  for (const auto& p : cmd.params) {
    size_t i = 0;
    while (i < 5 && !spec->params[i].empty() && spec->params[i] != p.name) ++i;
    if (i == 5 || spec->params[i].empty()) {
      TORII_LOG(error, "invalid parameter name: \"%s\" in \"%s\" SSI command%s", p.name.c_str(), cmd.name.c_str(),
                log.c_str());
      return error_message();
    }
    if (values[i]) {
      TORII_LOG(error, "duplicate \"%s\" parameter in \"%s\" SSI command%s", p.name.c_str(), cmd.name.c_str(),
                log.c_str());
      return error_message();
    }
    values[i] = &p.value;
  }
  for (auto m : spec->mandatory) {
    if (m.empty()) continue;
    size_t i = 0;
    while (spec->params[i] != m) ++i;
    if (!values[i]) {
      TORII_LOG(error, "mandatory \"%.*s\" parameter is absent in \"%s\" SSI command%s", int(m.size()), m.data(),
                cmd.name.c_str(), log.c_str());
      return error_message();
    }
  }
  bool ok = true;
  switch (spec->id) {
    case Name::include:
      ok = include(values[0], values[1], values[2], values[3], values[4]);
      break;
    case Name::echo:
      ok = echo(*values[0], values[1], values[2]);
      break;
    case Name::config:
      if (values[1]) timefmt_ = *values[1];
      if (values[0]) errmsg_ = *values[0];
      break;
    case Name::set:
      ok = set(*values[0], *values[1]);
      break;
    case Name::if_:
    case Name::elif:
      ok = condition(cmd, *values[0]);
      break;
    case Name::else_:
      output_on_ = !output_chosen_;
      conditional_ = 2;
      break;
    case Name::endif:
      output_on_ = true;
      output_chosen_ = false;
      conditional_ = 0;
      break;
    case Name::block:
      main_->blocks.push_back({*values[0], {}});
      output_on_ = false;
      in_block_ = true;
      break;
    case Name::endblock:
      output_on_ = true;
      in_block_ = false;
      break;
  }
  if (!ok) error_message();
}

bool SsiSink::lookup(std::string_view name, std::string& value) const {
  if (name.size() == 1 && name[0] >= '0' && name[0] <= '9') {
    const size_t i = size_t(name[0] - '0');
    if (i < main_->captures.size()) {
      value = main_->captures[i];
      return true;
    }
  }
  if (const std::string* v = main_->variable(name)) {
    value = *v;
    return true;
  }
  if (name == "date_local" || name == "date_gmt") {
    value = date(name == "date_gmt");
    return true;
  }
  value.clear();
  return request_variable(ex_, name, value);
}

bool SsiSink::evaluate(std::string_view text, std::string& out) {
  std::string error;
  if (ssi::evaluate(text, [this](std::string_view n, std::string& v) { return lookup(n, v); }, out, error)) return true;
  TORII_LOG_EX(ex_, error, "%s%s", error.c_str(), http::log_context(ex_).c_str());
  return false;
}

std::string SsiSink::date(bool gmt) const { return format_date(gmt, timefmt_); }

bool SsiSink::include(const std::string* virt, const std::string* file, const std::string* wait, const std::string* set,
                      const std::string* stub) {
  const std::string log = http::log_context(ex_);
  if (virt && file) {
    TORII_LOG(error, "inclusion may be either virtual=\"%s\" or file=\"%s\"%s", virt->c_str(), file->c_str(),
              log.c_str());
    return false;
  }
  if (!virt && !file) {
    TORII_LOG(error, "no parameter in \"include\" SSI command%s", log.c_str());
    return false;
  }
  if (set && stub) {
    TORII_LOG(error, "\"set\" and \"stub\" cannot be used together in \"include\" SSI command%s", log.c_str());
    return false;
  }
  bool waits = false;
  if (wait) {
    if (!virt) {
      TORII_LOG(error, "\"wait\" cannot be used with file=\"%s\"%s", file->c_str(), log.c_str());
      return false;
    }
    const std::string w = lower(*wait);
    if (w == "yes") {
      waits = true;
    } else if (w != "no") {
      TORII_LOG(error, "invalid value \"%s\" in the \"wait\" parameter%s", wait->c_str(), log.c_str());
      return false;
    }
  }
  if (file) waits = true;  // nginx waits for a file= include
  std::string uri;
  if (!evaluate(virt ? *virt : *file, uri)) return false;
  std::string path, args;
  if (!include_uri(uri, ex_.req.path, path, args)) {
    TORII_LOG(error, "unsafe URI \"%s\" was detected%s", uri.c_str(), log.c_str());
    return false;
  }
  std::optional<std::string> stub_text;
  if (stub) {
    for (const auto& b : main_->blocks)
      if (b.name == *stub) stub_text = b.content;
    if (!stub_text) {
      TORII_LOG(error, "\"stub\"=\"%s\" for \"include\" not found%s", stub->c_str(), log.c_str());
      return false;
    }
  }
  if (ex_.subrequest_depth + 1 > kMaxDepth) {
    TORII_LOG(error, "subrequests cycle while processing \"%s\"%s", path.c_str(), log.c_str());
    return false;
  }
  if (main_->subrequests >= kMaxSubrequests) {
    TORII_LOG(error, "too many subrequests while processing \"%s\"%s", path.c_str(), log.c_str());
    return false;
  }
  ++main_->subrequests;
  auto sub = std::make_shared<Subrequest>(ex_, std::move(path), std::move(args), [self = weak_from_this()] {
    if (auto s = self.lock()) s->pump();
  });
  if (set) {
    waiting_ = sub;
    waiting_set_ = lower(*set);
  } else {
    output_.push_include(sub, std::move(stub_text));
    if (waits) waiting_ = sub;
  }
  sub->start();
  return true;
}

// The include the parsing waited for has ended; a `set` takes its body.
void SsiSink::include_done() {
  std::shared_ptr<Subrequest> sub = std::move(waiting_);
  waiting_ = nullptr;
  if (!waiting_set_.empty()) {
    std::string value;
    if (sub->status() < 300) {
      if (sub->body_text(sub->output_limit(), value)) {
        main_->set(waiting_set_, std::move(value));
      } else {
        TORII_LOG_EX(ex_, error, "too big subrequest response while setting \"%s\"%s", waiting_set_.c_str(),
                  http::log_context(ex_).c_str());
      }
    }
    waiting_set_.clear();
    ex_.services().loop->defer([sub] {});  // its exchange may still be on the stack
  }
}

bool SsiSink::echo(const std::string& var, const std::string* def, const std::string* encoding) {
  std::string value;
  const bool found = lookup(lower(var), value);
  if (!found) value = def ? *def : "(none)";
  if (value.empty()) return true;
  if (encoding) {
    if (*encoding == "none") {
      encoding_ = Encoding::none;
    } else if (*encoding == "url") {
      encoding_ = Encoding::url;
    } else if (*encoding == "entity") {
      encoding_ = Encoding::entity;
    } else {
      TORII_LOG_EX(ex_, error, "unknown encoding \"%s\" in the \"echo\" command%s", encoding->c_str(),
                http::log_context(ex_).c_str());
    }
  }
  switch (encoding_) {
    case Encoding::url:
      output_.push_text(url_encode(value));
      break;
    case Encoding::entity:
      output_.push_text(entity_encode(value));
      break;
    case Encoding::none:
      output_.push_text(value);
      break;
  }
  return true;
}

bool SsiSink::set(const std::string& var, const std::string& value) {
  std::string out;
  if (!evaluate(value, out)) return false;
  main_->set(lower(var), std::move(out));
  return true;
}

bool SsiSink::condition(const Command& cmd, const std::string& expr) {
  if (cmd.name == "if" && conditional_) {
    TORII_LOG_EX(ex_, error, "the \"if\" command inside the \"if\" command%s", http::log_context(ex_).c_str());
    return false;
  }
  if (output_chosen_) {
    output_on_ = false;
    return true;
  }
  bool result = false;
  Match match;
  std::string error;
  if (!evaluate_condition(expr, [this](std::string_view n, std::string& v) { return lookup(n, v); }, result, match,
                          error)) {
    TORII_LOG_EX(ex_, error, "%s%s", error.c_str(), http::log_context(ex_).c_str());
    return false;
  }
  if (!match.groups.empty()) {
    main_->captures = std::move(match.groups);
    for (auto& [name, value] : match.named) main_->set(name, std::move(value));
  }
  output_on_ = result;
  if (result) output_chosen_ = true;
  conditional_ = 1;
  return true;
}

}  // namespace torii::ssi
