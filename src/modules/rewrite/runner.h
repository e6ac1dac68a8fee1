// Runs a rewrite program (program.h) against a request: nginx's server
// rewrite phase (the server's steps, before a location is chosen) and
// rewrite phase (the location's, after). A block without rewrite-module
// directives has no program and costs one null test.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace torii::config {
class Regex;
}
namespace torii::http {
class Exchange;
}

namespace torii::rewrite {

enum class Outcome : uint8_t {
  proceed,      // go on with this location (an `if` may have switched its settings)
  uri_changed,  // a rewrite changed the URI without `break`: choose the location again
  responded,    // return, a redirect or an error answered the request
};

Outcome run_server(http::Exchange& ex);
Outcome run_location(http::Exchange& ex);

// What `set` (and auth_request_set) writes: a variable's slot, or $args,
// which changes the request's arguments.
void set_slot(http::Exchange& ex, uint32_t slot, std::string_view value);
void set_args(http::Exchange& ex, std::string args);

// After `re` matched into ex.captures: its named groups set their variables.
void assign_named_captures(const config::Regex& re, http::Exchange& ex);

}  // namespace torii::rewrite
