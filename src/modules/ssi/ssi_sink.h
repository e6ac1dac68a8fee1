// The SSI body filter of one response: parses the body as it streams
// (ssi_filter.cc) and runs its commands (commands.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "config/ssi_config.h"
#include "http/exchange.h"
#include "http/piece_queue.h"
#include "modules/ssi/date.h"
#include "modules/ssi/main_state.h"
#include "modules/ssi/ordered_output.h"
#include "modules/ssi/parser.h"

namespace torii::ssi {

class SsiSink final : public http::ResponseSink, public std::enable_shared_from_this<SsiSink> {
 public:
  SsiSink(http::Exchange& ex, const config::SsiConfig& cfg, std::shared_ptr<MainState> main);

  void attach(std::shared_ptr<http::ResponseSink> filter_below, http::ResponseSink& below);

  // The head goes to the codec from the exchange, not through here.
  void send_head(const http::ResponseHead&) override {}
  void send_body(std::string_view data) override;
  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override;
  void finish() override;
  void abort() override;
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override {
    next_->set_trailers(std::move(trailers));
  }
  size_t queued_bytes() const override { return next_->queued_bytes() + input_bytes_; }
  void set_drain_callback(std::function<void()> cb) override;

 private:
  // ssi_filter.cc: the stream.
  void pump();
  void step();
  bool parse_slice();
  size_t parse(std::string_view data);
  void schedule_pump();
  void wait_for_sink();
  void end();

  // commands.cc: the commands.
  void run(const Command& cmd);
  void text(std::string_view text);
  void error_message();
  bool include(const std::string* virt, const std::string* file, const std::string* wait, const std::string* set,
               const std::string* stub);
  bool echo(const std::string& var, const std::string* def, const std::string* encoding);
  bool set(const std::string& var, const std::string& value);
  bool condition(const Command& cmd, const std::string& expr);
  void include_done();
  bool lookup(std::string_view name, std::string& value) const;
  bool evaluate(std::string_view text, std::string& out);
  std::string date(bool gmt) const;
  std::string render_stub(const std::string& block);

  http::Exchange& ex_;
  const config::SsiConfig& cfg_;  // kept alive by the exchange's config
  std::shared_ptr<MainState> main_;
  Parser parser_;
  std::shared_ptr<http::ResponseSink> filter_below_;
  http::ResponseSink* next_ = nullptr;

  http::PieceQueue input_;  // body not parsed yet
  size_t input_bytes_ = 0;
  OrderedOutput output_;
  std::function<void()> handler_drain_;
  bool finish_wanted_ = false;
  bool parser_finished_ = false;
  bool done_ = false;
  bool pumping_ = false;
  bool pump_again_ = false;
  bool pump_scheduled_ = false;
  bool sink_wait_ = false;

  // The page's state (nginx's SSI context).
  bool output_on_ = true;       // text and commands take effect
  bool output_chosen_ = false;  // a branch of this if/elif/else was taken
  int conditional_ = 0;         // 0 outside if; 1 after if/elif; 2 after else
  bool in_block_ = false;       // between block and endblock
  enum class Encoding : unsigned char { none, url, entity } encoding_ = Encoding::entity;
  std::string errmsg_ = "[an error occurred while processing the directive]";
  std::string timefmt_ = std::string(kDefaultTimefmt);
  // An include the parsing waits for (wait="yes", file=, set=).
  std::shared_ptr<Subrequest> waiting_;
  std::string waiting_set_;  // the variable it sets; empty: none
};

}  // namespace torii::ssi
