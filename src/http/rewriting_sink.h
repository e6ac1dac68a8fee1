// A body filter that rewrites the bytes passing through it (sub_filter's
// replacements, charset recoding), between the exchange (or the filters
// before it) and the filters after it, over every codec. Bytes are
// rewritten as they come; files are read 64 KB at a time while the sink
// below holds less than 256 KB, so a large file never sits in memory whole.
// At the end of the body the rewriter gives what it held back (a partial
// match, an incomplete character), then the response ends.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/piece_queue.h"
#include "http/response.h"

namespace torii::http {

class Exchange;

class RewritingSink : public ResponseSink, public std::enable_shared_from_this<RewritingSink> {
 public:
  // Puts this sink in front of `filter_below` (the next body filter, or
  // null) over `below` (the sink under the body filters).
  void attach(std::shared_ptr<ResponseSink> filter_below, ResponseSink& below);

  // The head goes to the codec from the exchange, not through here.
  void send_head(const ResponseHead&) override {}
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const OpenFile> file, int64_t offset, int64_t length) override;
  void finish() override;
  // The exchange aborts the codec's sink itself.
  void abort() override;
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override;
  size_t queued_bytes() const override;
  void set_drain_callback(std::function<void()> cb) override;

 protected:
  // `filter_name` words the error line of a file that cannot be read
  // ("the sub filter").
  RewritingSink(Exchange& ex, const char* filter_name) : ex_(ex), filter_name_(filter_name) {}

  // Appends to `out` what `data` becomes.
  virtual void rewrite(std::string_view data, std::string& out) = 0;
  // Appends to `out` what was held back, at the end of the body.
  virtual void rewrite_end(std::string& out) = 0;

  Exchange& ex_;

 private:
  void pass(std::string_view data);
  // Reads and rewrites queued pieces while the sink below has room; waits
  // for its drain callback otherwise. Ends the response when asked and done.
  void pump();

  const char* filter_name_;
  std::shared_ptr<ResponseSink> filter_below_;
  ResponseSink* next_ = nullptr;
  PieceQueue pending_;
  std::function<void()> handler_drain_;
  std::string out_;
  bool finish_wanted_ = false;
  bool done_ = false;
};

}  // namespace torii::http
