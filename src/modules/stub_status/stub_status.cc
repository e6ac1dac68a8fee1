#include "modules/stub_status/stub_status.h"

#include <algorithm>
#include <cstdio>

#include "http/exchange.h"
#include "http/pipeline.h"
#include "modules/stub_status/counters.h"

namespace torii::stub_status {

namespace {
// Waiting is what is open and neither reading nor answering a request; the
// counters are read one after another, so never show a negative.
int64_t waiting(const Totals& t) { return std::max<int64_t>(0, t.waiting()); }
}  // namespace

std::string page_text() {
  Totals t = totals();
  char buf[256];
  int n = std::snprintf(buf, sizeof buf,
                        "Active connections: %lld \nserver accepts handled requests\n %lld %lld %lld \n"
                        "Reading: %lld Writing: %lld Waiting: %lld \n",
                        static_cast<long long>(t.active), static_cast<long long>(t.accepted),
                        static_cast<long long>(t.handled), static_cast<long long>(t.requests),
                        static_cast<long long>(t.reading), static_cast<long long>(t.writing),
                        static_cast<long long>(waiting(t)));
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

void serve(http::Exchange& ex) {
  if (ex.req.method != http::Method::get && ex.req.method != http::Method::head) {
    http::send_error(ex, 405);
    return;
  }
  std::string body = page_text();
  http::ResponseHead head;
  head.status = 200;
  head.add("Content-Type", "text/plain");
  head.content_length = static_cast<int64_t>(body.size());
  ex.send_head(std::move(head));
  ex.send_body(body);
  ex.finish();
}

bool append_variable(config::VarId id, std::string& out) {
  Totals t = totals();
  int64_t v = 0;
  switch (id) {
    case config::VarId::connections_active: v = t.active; break;
    case config::VarId::connections_reading: v = t.reading; break;
    case config::VarId::connections_writing: v = t.writing; break;
    case config::VarId::connections_waiting: v = waiting(t); break;
    default: return false;
  }
  out.append(std::to_string(v));
  return true;
}

}  // namespace torii::stub_status
