#include "modules/mp4/movie.h"

namespace torii::mp4 {

bool Movie::fail(std::string_view text) {
  error.clear();
  for (const char c : text) {
    if (c == '@') {
      error.push_back('"');
      error.append(file_name);
      error.push_back('"');
    } else {
      error.push_back(c);
    }
  }
  return false;
}

}  // namespace torii::mp4
