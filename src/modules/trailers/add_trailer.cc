#include "modules/trailers/add_trailer.h"

#include "http/exchange.h"
#include "http/filter_status.h"
#include "http/variables.h"

namespace torii::trailers {

namespace {

bool applies(const config::AddHeader& t, int status) { return t.always || http::filter_status(status); }

}  // namespace

bool expect(const http::Exchange& ex, http::ResponseHead& head) {
  const auto& list = ex.settings().add_trailers;
  if (list.empty() || ex.header_only || ex.access.subrequest || ex.background || ex.slice_part) return false;
  bool any = false;
  for (const auto& t : list) any = any || applies(t, head.status);
  if (!any) return false;
  if (ex.req.version < 11) return false;  // HTTP/1.0 (and 0.9): no chunked body, no trailers
  if (ex.req.version == 11) {
    if (!ex.settings().core.chunked_transfer_encoding) return false;
    head.content_length = -1;  // chunked, to carry them
  }
  return true;
}

void render(const http::Exchange& ex, std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& t : ex.settings().add_trailers) {
    if (!applies(t, ex.status)) continue;
    std::string value = http::render(t.value, ex);
    if (!value.empty()) out.emplace_back(t.name, std::move(value));
  }
}

}  // namespace torii::trailers
