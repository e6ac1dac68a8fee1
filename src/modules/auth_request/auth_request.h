// auth_request: the access check that asks a local location (usually a
// proxied one) through a subrequest, as nginx's: a GET to the URI with the
// client's headers and no body, only its status kept. 2xx allows; 401
// (with the subrequest's WWW-Authenticate) and 403 are the client's
// answer; anything else is a 500. auth_request_set assigns variables from
// the subrequest's values once it is done, whatever its status.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::auth {

// Starts the subrequest. True: the request waits, and the access phase
// ends with access::finish_access() when the subrequest is done. False:
// the request was answered (the subrequest could not start). `prior` is
// what an earlier check of `satisfy any` refused with (0: none).
bool start_auth_request(http::Exchange& ex, int prior);

}  // namespace torii::auth
