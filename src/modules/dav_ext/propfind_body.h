// A PROPFIND request's body (RFC 4918 14.20) read with libxml2, as the
// dav-ext module reads it: elements are known by their local name only
// (any namespace), <propname/> asks for the names, <allprop/> for every
// property, <prop> for those it names among the six the module knows
// (others are left out of the answer). An empty body asks for all.
// Fuzzed in fuzz/dav_propfind_body_fuzz.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace torii::dav_ext {

enum Property : uint8_t {
  displayname = 0x01,
  getcontentlength = 0x02,
  getlastmodified = 0x04,
  resourcetype = 0x08,
  lockdiscovery = 0x10,
  supportedlock = 0x20,
  all_properties = 0x7f,  // <allprop/>, or an empty body
  names_only = 0x80,      // <propname/>
};

// The Property bits the body asks for; nullopt when it is not well-formed
// XML (the module's 400).
std::optional<uint8_t> parse_propfind_body(std::string_view body);

}  // namespace torii::dav_ext
