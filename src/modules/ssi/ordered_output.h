// A body filter's output when parts of it come from subrequests: text and
// included responses in the order the page names them. Includes run at
// once, side by side; the one at the front streams out as it arrives, the
// ones behind it wait here until their turn (nginx's postponed output).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "http/response.h"
#include "modules/ssi/subrequest.h"

namespace torii::ssi {

class OrderedOutput {
 public:
  void push_text(std::string_view text);
  void push_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length);
  // `stub`: what goes out instead when the include fails (an error status
  // or an empty body); the include is then held until it ends.
  void push_include(std::shared_ptr<Subrequest> include, std::optional<std::string> stub = std::nullopt);

  enum class Flush : unsigned char {
    all_out,   // nothing left here
    sink_full, // the sink below holds `mark` bytes or more
    waiting,   // the front include has not ended
    failed,    // a file could not be read (errno says why)
  };
  Flush flush(http::ResponseSink& next, size_t mark, http::Exchange& ex);

  bool empty() const { return parts_.empty(); }
  // Turns a stub into what goes out (the SSI filter runs its commands).
  std::function<std::string(const std::string&)> render_stub;

 private:
  struct Part {
    std::string text;
    std::shared_ptr<const http::OpenFile> file;  // a range of it instead of text
    int64_t offset = 0, length = 0;
    std::shared_ptr<Subrequest> include;
    std::optional<std::string> stub;
  };
  std::deque<Part> parts_;
};

}  // namespace torii::ssi
