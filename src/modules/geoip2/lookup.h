// One variable of a geoip2 {} block: either a path into the record an
// address finds (`$name [default=V] [source=$v] country iso_code`) or a
// fact about the file (`$name metadata build_epoch`). Plain data, shared
// by http and stream, which find the address each in their own way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/ip_address.h"

namespace torii::geoip2 {

class Database;

enum class Metadata : uint8_t { none, build_epoch, last_check, last_change };

struct Lookup {
  std::string name;  // without '$'
  std::shared_ptr<Database> database;
  bool is_metadata = false;
  Metadata metadata = Metadata::none;  // what a metadata variable prints; none: not found
  std::vector<std::string> path;       // the record's keys and array indexes, in order
  std::string default_value;           // empty: a miss is "not found"
  std::string source;                  // source=: the template naming the address; empty: the client
};

// A record variable's value for `ip` (family 0: no address, a miss): the
// value found, else the default; false when neither (nginx's not found).
bool append_record(const Lookup& l, const net::IpAddress& ip, std::string& out);

// A metadata variable's value; false for a name the module does not know.
bool append_metadata(const Lookup& l, std::string& out);

}  // namespace torii::geoip2
