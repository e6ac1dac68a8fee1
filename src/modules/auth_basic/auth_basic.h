// auth_basic: the access check of `auth_basic REALM` with
// `auth_basic_user_file FILE`, as nginx's: the user and password of
// "Authorization: Basic", the user's line of the htpasswd file (read at
// each request, so edits apply at once), its hash checked by
// auth/password.h. A verified user, password and hash are remembered
// (process-wide, keyed by a SHA-256 of the password, never the password),
// so a slow hash (bcrypt, tens of ms) is paid by the first request only,
// and off the worker's loop.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::auth {

// 0: allowed; 401 (with WWW-Authenticate on ex.response), 403 (no such
// file) or 500: the request is refused with that status. A realm that
// renders as "off" turns the check off (0).
// kBasicPending: the hash is a slow one (libcrypt's "$" schemes, $apr1$)
// and not remembered; it is checked on the BlockingPool and the request
// waits, to go on with access::continue_after_basic(ex, code, refused).
// `refused` is what an earlier check of `satisfy any` refused with.
constexpr int kBasicPending = -2;
int check_basic(http::Exchange& ex, int refused);

}  // namespace torii::auth
