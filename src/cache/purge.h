// Requests that remove cache entries. Three ways to ask, one zone purge:
// - nginx's proxy_cache_purge conditions: 204 when entries went, 404 when
//   none matched;
// - the ngx_cache_purge module's same-location form (`proxy_cache_purge
//   PURGE from 127.0.0.1;`): the purge method, from the listed addresses,
//   purges the request's own key, answered with a page that names the key
//   and file (200), 404 when there was no entry, 403 from elsewhere;
// - its separate-location form (`proxy_cache_purge ZONE KEY;` in a
//   location of its own): every request there purges KEY.
// A key ending in '*' removes every entry it begins (as the module's later
// versions; nginx's conditions do the same).
#pragma once

#include <string>

namespace torii::http {
class Exchange;
}
namespace torii::config {
struct PurgeByMethod;
}

namespace torii::cache {

class Zone;

// After a true proxy_cache_purge condition.
void answer_condition_purge(http::Exchange& ex, Zone& zone, const std::string& key);

// Whether the request is the module's purge (its method is the purge
// method); one from a client not in the `from` list is answered 403 here.
enum class MethodPurge : unsigned char { no, refused, yes };
MethodPurge method_purge(http::Exchange& ex, const config::PurgeByMethod& p);
// The module's purge of `key` (every entry with `p.all_entries`).
void answer_method_purge(http::Exchange& ex, Zone& zone, const std::string& key, bool all_entries);

// The content handler of a location with `proxy_cache_purge ZONE KEY`.
void serve_purge_location(http::Exchange& ex);

}  // namespace torii::cache
