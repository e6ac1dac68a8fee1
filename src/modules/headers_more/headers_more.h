// The headers-more rules at request time (more_set_headers and the like):
// the response's fields are set or cleared in the header filters, before
// expires and add_header, where the module's filter sits in nginx's chain;
// the request's at the end of the location's rewrite phase, so the proxy,
// $http_* and $host see them.
#pragma once

namespace torii::http {
class Exchange;
struct ResponseHead;
}

namespace torii::headers_more {

// Whether the response still gets the Server and Date fields the server
// adds itself (a rule that set or cleared one says no).
struct OwnFields {
  bool server = true;
  bool date = true;
};

void apply_output(const http::Exchange& ex, http::ResponseHead& head, OwnFields& own);

void apply_input(http::Exchange& ex);

}  // namespace torii::headers_more
