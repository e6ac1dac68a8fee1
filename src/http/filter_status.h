// nginx's list of response statuses that add_header, add_trailer (each
// without `always`) and expires apply to.
#pragma once

namespace torii::http {

inline bool filter_status(int status) {
  switch (status) {
    case 200: case 201: case 204: case 206:
    case 301: case 302: case 303: case 304: case 307: case 308:
      return true;
    default:
      return false;
  }
}

}  // namespace torii::http
