// auth_basic: the access check of `auth_basic REALM` with
// `auth_basic_user_file FILE`, as nginx's: the user and password of
// "Authorization: Basic", the user's line of the htpasswd file (read at
// each request, so edits apply at once), its hash checked by
// auth/password.h. A verified user, password and hash are remembered
// (process-wide, keyed by a SHA-256 of the password, never the password),
// so a slow hash (bcrypt, tens of ms) is paid by the first request only.
#pragma once

namespace torii::http {
class Exchange;
}

namespace torii::auth {

// 0: allowed; 401 (with WWW-Authenticate on ex.response), 403 (no such
// file) or 500: the request is refused with that status. A realm that
// renders as "off" turns the check off (0).
int check_basic(http::Exchange& ex);

}  // namespace torii::auth
