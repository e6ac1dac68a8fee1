// Where a request's URI maps on disk: `root` + URI, or `alias` in place of
// the location's prefix, with nginx's variable rules: a root with
// variables is rendered per request (a relative result is taken from the
// prefix); an alias with variables (regex captures, $host...) names the
// whole file. Shared by the static handler and $document_root,
// $realpath_root and $request_filename.
#pragma once

#include <string>
#include <string_view>

namespace torii::http {

class Exchange;

// The location's root, or its alias, as this request sees it.
void append_document_root(const Exchange& ex, std::string& out);

// root + uri, or the alias in place of the location's prefix. False when
// the URI cannot map to a file we are willing to open ("..", NUL).
bool map_uri_to_path(const Exchange& ex, std::string_view uri, std::string& out);

// True in a regex location with an alias, where the alias names the whole
// file (Exchange::uri_added_to_alias aside).
bool in_regex_alias_location(const Exchange& ex);

// The file a try_files entry tests: as map_uri_to_path, except that in a
// regex location with an alias the entry is appended to the alias, as
// nginx does (Icinga Web 2's `location ~ ^/icingaweb2(.+)? { alias ...;
// try_files $1 $uri $uri/ /icingaweb2/index.php$is_args$args; }`).
bool map_try_files_entry(Exchange& ex, std::string_view entry, std::string& out);

}  // namespace torii::http
