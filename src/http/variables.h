// Renders config templates ($variables) against one exchange.
#pragma once

#include <string>
#include <vector>

#include "config/template.h"

namespace torii::http {

class Exchange;

// Appends the template's text with every variable's value. An unset
// variable renders as empty ("-" in access logs is the log's choice).
void render(const config::Template& t, const Exchange& ex, std::string& out);
std::string render(const config::Template& t, const Exchange& ex);

// nginx's predicates (early_hints, proxy_no_cache, client_body_early_read):
// true when one of the templates renders neither empty nor "0".
bool any_true(const std::vector<config::Template>& list, const Exchange& ex);

// Appends one variable's value; returns false if it has no value here.
bool append_variable(const config::Variable& v, const Exchange& ex, std::string& out);

// A subrequest (SSI include, auth_request, mirror, slice, cache update)
// has its request's $request_id, as nginx's share their variables.
void share_request_id(Exchange& sub, const Exchange& parent);

// The proxy hands over the upstream's response fields (when the config
// reads them, see Config::keep_upstream_headers).
struct Header;
void keep_upstream_headers(Exchange& ex, const std::vector<Header>& fields);

}  // namespace torii::http
