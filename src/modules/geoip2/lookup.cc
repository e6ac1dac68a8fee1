#include "modules/geoip2/lookup.h"

#include <array>

#include "modules/geoip2/database.h"
#include "modules/geoip2/entry_format.h"

namespace torii::geoip2 {

namespace {

// MMDB_aget_value takes the path as C strings ending in a null; a path
// longer than a GeoIP2 record is ever deep goes through the heap.
bool find_value(const OpenFile& file, const net::IpAddress& ip, const std::vector<std::string>& path,
                std::string& out) {
  if (ip.family != AF_INET && ip.family != AF_INET6) return false;
  // An IPv4 address is looked up as IPv4, which an IPv6 database answers
  // from its IPv4 subtree (libmaxminddb's MMDB_lookup_sockaddr).
  const sockaddr_storage sa = net::to_sockaddr(ip);
  int mmdb_error = MMDB_SUCCESS;
  MMDB_lookup_result_s result =
      MMDB_lookup_sockaddr(&file.mmdb(), reinterpret_cast<const sockaddr*>(&sa), &mmdb_error);
  if (mmdb_error != MMDB_SUCCESS || !result.found_entry) return false;
  std::array<const char*, 16> fixed{};
  std::vector<const char*> heap;
  const char** keys = fixed.data();
  if (path.size() + 1 > fixed.size()) {
    heap.resize(path.size() + 1);
    keys = heap.data();
  }
  for (size_t i = 0; i < path.size(); ++i) keys[i] = path[i].c_str();
  keys[path.size()] = nullptr;
  MMDB_entry_data_s entry{};
  if (MMDB_aget_value(&result.entry, &entry, keys) != MMDB_SUCCESS) return false;
  return append_entry(entry, out);
}

}  // namespace

bool append_record(const Lookup& l, const net::IpAddress& ip, std::string& out) {
  if (l.database) {
    // Held for the lookup: a reload may swap the file meanwhile.
    const std::shared_ptr<const OpenFile> file = l.database->current();
    const size_t before = out.size();
    if (file && find_value(*file, ip, l.path, out)) return true;
    out.resize(before);
  }
  if (l.default_value.empty()) return false;
  out.append(l.default_value);
  return true;
}

bool append_metadata(const Lookup& l, std::string& out) {
  if (!l.database) return false;
  switch (l.metadata) {
    case Metadata::build_epoch: {
      const std::shared_ptr<const OpenFile> file = l.database->current();
      if (!file) return false;
      out.append(std::to_string(file->mmdb().metadata.build_epoch));
      return true;
    }
    case Metadata::last_check:
      out.append(std::to_string(static_cast<int64_t>(l.database->last_check())));
      return true;
    case Metadata::last_change:
      out.append(std::to_string(static_cast<int64_t>(l.database->last_change())));
      return true;
    case Metadata::none:
      break;
  }
  return false;
}

}  // namespace torii::geoip2
