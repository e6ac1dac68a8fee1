// Runs a rewrite program (program.h) against a request: nginx's server
// rewrite phase (the server's steps, before a location is chosen) and
// rewrite phase (the location's, after). A block without rewrite-module
// directives has no program and costs one null test.
#pragma once

#include <cstdint>

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

// After `re` matched into ex.captures: its named groups set their variables.
void assign_named_captures(const config::Regex& re, http::Exchange& ex);

}  // namespace torii::rewrite
