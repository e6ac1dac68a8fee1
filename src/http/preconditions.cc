#include "http/preconditions.h"

#include "http/date.h"
#include "http/etag.h"
#include "http/exchange.h"
#include "http/if_modified_since.h"

namespace torii::http {

int evaluate_preconditions(const Exchange& ex, std::string_view etag, int64_t last_modified) {
  const RequestHead& req = ex.req;
  if (const Header* h = req.find(HeaderToken::if_match)) {
    if (!match_hits_strong(h->value, etag)) return 412;
  } else if (const Header* h = req.find(HeaderToken::if_unmodified_since)) {
    // Without a Last-Modified nothing shows the response unchanged (nginx);
    // a value that is no date is ignored (RFC 9110 13.1.4).
    const auto date = parse_http_date(h->value);
    if (date && (last_modified < 0 || last_modified > *date)) return 412;
  }
  if (const Header* h = req.find(HeaderToken::if_none_match)) {
    if (none_match_hits(h->value, etag)) return 304;
  } else if (const Header* h = req.find(HeaderToken::if_modified_since)) {
    if (last_modified >= 0 && not_modified_since(ex.settings().core.if_modified_since, h->value, last_modified))
      return 304;
  }
  return 0;
}

}  // namespace torii::http
