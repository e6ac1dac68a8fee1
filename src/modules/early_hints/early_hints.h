// early_hints (nginx 1.29): a 103 Early Hints response from the upstream is
// passed on to the client, ahead of the final response, when one of the
// location's conditions renders non-empty and not "0" (nginx's predicates,
// e.g. `early_hints $http2$http3;`); without the directive it is dropped.
// The hints carry the upstream's fields less the hop-by-hop and hidden
// ones; HTTP/1.1, HTTP/2 and HTTP/3 clients get them (an HTTP/1.0 one not).
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::early_hints {

bool wanted(http::Exchange& ex);

}  // namespace torii::early_hints
