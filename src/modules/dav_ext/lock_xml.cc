#include "modules/dav_ext/lock_xml.h"

#include "core/xml_escape.h"
#include "modules/dav_ext/lock_headers.h"

namespace torii::dav_ext {

void append_lockdiscovery(std::string& out, const Lock* lock, int64_t now) {
  if (lock == nullptr) {
    out += "<D:lockdiscovery/>\n";
    return;
  }
  out += "<D:lockdiscovery>\n<D:activelock>\n";
  out += "<D:locktype><D:write/></D:locktype>\n";
  out += "<D:lockscope><D:exclusive/></D:lockscope>\n";
  out += lock->infinite ? "<D:depth>infinity</D:depth>\n" : "<D:depth>0</D:depth>\n";
  out += "<D:timeout>Second-" + std::to_string(lock->expire - now) + "</D:timeout>\n";
  out += "<D:locktoken><D:href>";
  append_token(out, lock->token, false);
  out += "</D:href></D:locktoken>\n";
  // The root as the URI reads decoded, as the module writes it.
  out += "<D:lockroot><D:href>";
  core::append_xml_escaped(out, lock->root);
  out += "</D:href></D:lockroot>\n";
  out += "</D:activelock>\n</D:lockdiscovery>\n";
}

}  // namespace torii::dav_ext
