#include "modules/compression/compression_filter.h"

#include <strings.h>

#include <cstring>
#include <algorithm>

#include "config/compression_config.h"
#include "config/regex.h"
#include "core/event_loop.h"
#include "http/date.h"
#include "http/exchange.h"
#include "http/log_context.h"
#include "http/piece_queue.h"
#include "http/user_agent_quirks.h"
#include "log/error_log.h"
#include "modules/compression/accept_encoding.h"
#include "modules/compression/encoded_cache.h"
#include "modules/compression/encoder.h"
#include "modules/compression/whole_gzip.h"

namespace torii::config {

bool CompressTypes::matches(std::string_view content_type) const {
  if (any) return true;
  // Compare the type without its parameters ("text/html; charset=utf-8").
  size_t semi = content_type.find(';');
  std::string_view type = content_type.substr(0, semi);
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  for (const auto& t : types)
    if (t.size() == type.size() && strncasecmp(t.data(), type.data(), t.size()) == 0) return true;
  return false;
}

}  // namespace torii::config

namespace torii::compression {

namespace {

using config::CompressionConfig;
using http::Exchange;
using http::ResponseHead;

// Input is encoded in slices of this size, so no call holds the loop long
// and output is handed on in bounded pieces.
constexpr size_t kSlice = 64 * 1024;
constexpr size_t kDecodeSlice = 4 * 1024;
// A gzip body of known length up to this size that arrives within one loop
// turn is compressed whole (see gather_).
constexpr int64_t kWholeMax = 1024 * 1024;

// ---- the body filter -------------------------------------------------------

class CompressSink final : public http::ResponseSink, public std::enable_shared_from_this<CompressSink> {
 public:
  CompressSink(Exchange& ex, http::ResponseSink& next, Coding coding, int level, int64_t size_hint, size_t emit_at)
      : ex_(ex),
        next_(next),
        coding_(coding),
        level_(level),
        size_hint_(size_hint),
        emit_at_(emit_at),
        gathering_(coding == Coding::gzip && size_hint > 0 && size_hint <= kWholeMax) {}

  // The head goes to the codec from the exchange, not through here.
  void send_head(const ResponseHead&) override {}

  void send_body(std::string_view data) override {
    if (done_) return;
    if (!whole_file_only()) return;
    stop_capture();  // not a whole file alone
    if (gathering_) {
      gather_.append(data);
      if (int64_t(gather_.size()) >= size_hint_) {
        compress_gathered();
      } else {
        schedule_flush();  // the rest may not come this turn
      }
      return;
    }
    if (!pending_.empty()) {
      // Keep the order: behind a file still being encoded.
      pending_.push_bytes(data);
      return;
    }
    if (!encode(data, Encoder::Flush::none)) return;
    schedule_flush();
  }

  void send_file(std::shared_ptr<const http::OpenFile> file, int64_t offset, int64_t length) override {
    if (done_) return;
    if (!whole_file_only()) return;
    if (!stop_gathering()) return;
    if (coding_ != Coding::identity && !started_ && pending_.empty() && offset == 0 && length == file->size &&
        file->size <= EncodedCache::kMaxFileSize && !ex_.request_filename.empty()) {
      // A whole static file: its encoding may be stored already.
      auto& cache = EncodedCache::local();
      if (auto bytes = cache.find(ex_.request_filename, coding_, level_, *file)) {
        started_ = true;
        stream_complete_ = true;
        ex_.compressed_in += length;
        ex_.compressed_out += int64_t(bytes->size());
        next_.send_body(*bytes);
        return;
      }
      capture_file_ = file;
      capture_ = std::make_shared<std::string>();
    } else {
      stop_capture();
    }
    pending_.push_file(std::move(file), offset, length);
    pump();
  }

  void finish() override {
    if (done_ || finish_wanted_) return;
    if (!stop_gathering()) return;  // a body shorter than its length
    finish_wanted_ = true;
    pump();
  }

  // The exchange aborts the codec's sink itself; this only stops encoding.
  void abort() override {
    done_ = true;
    pending_.clear();
    out_.clear();
    gather_.clear();
  }

  // What this filter holds itself is bounded by gzip_buffers and goes out
  // at the end of the turn at the latest: the handler paces on the codec's
  // queue alone (counting ours would make it wait for a drain that only
  // its own next bytes can bring).
  // Trailers wait in the codec's sink for its last frame or chunk.
  void set_trailers(std::vector<std::pair<std::string, std::string>> trailers) override {
    next_.set_trailers(std::move(trailers));
  }
  size_t queued_bytes() const override { return next_.queued_bytes(); }

  void set_drain_callback(std::function<void()> cb) override {
    if (!pending_.empty()) {
      handler_drain_ = std::move(cb);  // handed on once our own input is encoded
      return;
    }
    next_.set_drain_callback(std::move(cb));
  }

 private:
  // Encodes queued input while the connection's queue has room; waits for
  // its drain callback otherwise. Ends the response when asked and done.
  void pump() {
    while (!pending_.empty() && !done_) {
      if (next_.queued_bytes() >= emit_at_) {
        std::weak_ptr<CompressSink> self = weak_from_this();
        next_.set_drain_callback([self] {
          if (auto s = self.lock()) s->pump();
        });
        return;
      }
      std::string_view slice;
      if (!pending_.front_slice(kSlice, slice)) {
        TORII_LOG_EX(ex_, crit, "pread() failed while compressing (%s)%s", strerror(errno), http::log_context(ex_).c_str());
        fail();
        return;
      }
      const size_t n = slice.size();
      if (!encode(slice, Encoder::Flush::none)) return;
      pending_.consume(n);
    }
    if (done_) return;
    if (finish_wanted_) {
      if (!stream_complete_) {
        if (!encode({}, Encoder::Flush::finish)) return;
        // The codec's buffers go back to the thread's pool now, not when the
        // exchange ends: few responses are mid-stream at once, many may be
        // waiting to be logged or for their last bytes to drain.
        encoder_.reset();
        emit();
        if (capture_) EncodedCache::local().store(ex_.request_filename, coding_, level_, *capture_file_, std::move(capture_));
      }
      done_ = true;
      ex_.finish_filtered();
      return;
    }
    if (handler_drain_) next_.set_drain_callback(std::move(handler_drain_));
    handler_drain_ = nullptr;
  }

  // coding_ identity: this sink decodes gzip (gunzip) instead.

  // A body of known length that comes whole within one loop turn (a small
  // proxied page, usually) is compressed in one call, which costs about
  // half of what streaming it through zlib costs. The body is gathered
  // while it comes; at the end of a turn with some still owed, what came
  // goes to the streaming encoder after all and the rest follows it.
  void compress_gathered() {
    gathering_ = false;
    started_ = true;
    if (!gzip_whole(level_, gather_, out_)) {
      std::string body = std::move(gather_);
      gather_.clear();
      encode(body, Encoder::Flush::none);
      return;
    }
    ex_.compressed_in += int64_t(gather_.size());
    gather_.clear();
    gather_.shrink_to_fit();
    stream_complete_ = true;
    emit();
  }

  // Ends gathering, handing what was gathered to the streaming encoder.
  // False if encoding failed (the response is aborted).
  bool stop_gathering() {
    if (!gathering_) return true;
    gathering_ = false;
    if (gather_.empty()) return true;
    std::string body = std::move(gather_);
    gather_.clear();
    return encode(body, Encoder::Flush::none);
  }

  // After a whole file came from the cache, or a whole body was compressed
  // at once, the encoded stream is complete: nothing may follow it.
  bool whole_file_only() {
    if (!stream_complete_) return true;
    TORII_LOG_EX(ex_, alert, "body after a whole encoded body%s", http::log_context(ex_).c_str());
    fail();
    return false;
  }

  void stop_capture() {
    capture_.reset();
    capture_file_.reset();
  }

  bool encode(std::string_view in, Encoder::Flush flush) {
    started_ = true;
    if (!encoder_) encoder_ = coding_ == Coding::identity ? make_gunzip() : make_encoder(coding_, level_, size_hint_);
    if (!encoder_) {
      fail();
      return false;
    }
    // Decoding takes small slices: their output (up to ~1000 times larger
    // for gzip) is what this filter holds at once.
    const size_t slice = coding_ == Coding::identity ? kDecodeSlice : kSlice;
    while (true) {
      std::string_view part = in.substr(0, slice);
      in.remove_prefix(part.size());
      const auto f = in.empty() ? flush : Encoder::Flush::none;
      if (!encoder_->write(part, f, out_)) {
        TORII_LOG_EX(ex_, error, "compression failed%s", http::log_context(ex_).c_str());
        fail();
        return false;
      }
      ex_.compressed_in += int64_t(part.size());
      if (out_.size() >= emit_at_ || f != Encoder::Flush::none) emit();
      if (in.empty()) return true;
    }
  }

  void emit() {
    if (out_.empty()) return;
    ex_.compressed_out += int64_t(out_.size());
    if (capture_) capture_->append(out_);
    next_.send_body(out_);
    out_.clear();
  }

  // When the handler stops giving input with the body unfinished (an
  // upstream that paused), what was encoded so far goes out at the end of
  // this loop turn instead of waiting inside the encoder.
  void schedule_flush() {
    if (flush_scheduled_) return;
    core::EventLoop* loop = ex_.services().loop;
    if (!loop) {
      flush_now();
      return;
    }
    flush_scheduled_ = true;
    std::weak_ptr<CompressSink> self = weak_from_this();
    loop->defer([self] {
      if (auto s = self.lock()) {
        s->flush_scheduled_ = false;
        s->flush_now();
      }
    });
  }

  void flush_now() {
    if (done_ || finish_wanted_ || !pending_.empty()) return;
    if (!stop_gathering()) return;  // the upstream paused mid-body
    encode({}, Encoder::Flush::sync);
  }

  void fail() {
    stop_capture();
    done_ = true;
    pending_.clear();
    out_.clear();
    ex_.abort();
  }

  Exchange& ex_;
  http::ResponseSink& next_;
  const Coding coding_;
  const int level_;
  const int64_t size_hint_;
  std::unique_ptr<Encoder> encoder_;  // made at the first input: a cached file needs none
  const size_t emit_at_;
  // The output of a whole static file, stored in the EncodedCache at the end.
  std::shared_ptr<std::string> capture_;
  std::shared_ptr<const http::OpenFile> capture_file_;
  bool started_ = false;
  bool stream_complete_ = false;  // from the EncodedCache or compressed whole
  bool gathering_;                // see compress_gathered()
  std::string gather_;
  std::string out_;
  http::PieceQueue pending_;
  std::function<void()> handler_drain_;
  bool finish_wanted_ = false;
  bool done_ = false;
  bool flush_scheduled_ = false;
};

// ---- the header filter -----------------------------------------------------

bool contains_token(std::string_view list, std::string_view token) {
  // Cache-Control directives, compared case-insensitively as whole words.
  size_t i = 0;
  while (i + token.size() <= list.size()) {
    if (strncasecmp(list.data() + i, token.data(), token.size()) == 0) {
      const bool start_ok = i == 0 || list[i - 1] == ',' || list[i - 1] == ' ' || list[i - 1] == '\t';
      const size_t end = i + token.size();
      const bool end_ok = end == list.size() || list[end] == ',' || list[end] == ' ' || list[end] == '=' ||
                          list[end] == ';' || list[end] == '\t';
      if (start_ok && end_ok) return true;
    }
    ++i;
  }
  return false;
}

bool any_cache_control(const ResponseHead& head, std::string_view token) {
  for (const auto& [name, value] : head.headers)
    if (strcasecmp(name.c_str(), "Cache-Control") == 0 && contains_token(value, token)) return true;
  return false;
}

// gzip_proxied, for a request that came through a proxy (has Via): judged
// on the request's Authorization and the response's Expires, Date,
// Cache-Control, Last-Modified and ETag, in nginx's order.
bool proxied_allowed(uint32_t p, const Exchange& ex, const ResponseHead& head, int64_t now) {
  using namespace config;
  if (p == 0) return false;  // off
  if (p & kProxiedAny) return true;
  if ((p & kProxiedAuth) && ex.req.find(http::HeaderToken::authorization)) return true;
  if (const std::string* e = head.find("Expires")) {
    if (!(p & kProxiedExpired)) return false;
    auto expires = http::parse_http_date(*e);
    if (!expires) return false;
    int64_t date = now;
    if (const std::string* d = head.find("Date")) {
      auto parsed = http::parse_http_date(*d);
      if (!parsed) return false;
      date = *parsed;
    }
    return *expires < date;
  }
  if (head.find("Cache-Control")) {
    if ((p & kProxiedNoCache) && any_cache_control(head, "no-cache")) return true;
    if ((p & kProxiedNoStore) && any_cache_control(head, "no-store")) return true;
    if ((p & kProxiedPrivate) && any_cache_control(head, "private")) return true;
    return false;
  }
  if ((p & kProxiedNoLastModified) && head.find("Last-Modified")) return false;
  if ((p & kProxiedNoEtag) && head.find("ETag")) return false;
  return true;
}

void add_vary(ResponseHead& head) {
  for (const auto& [name, value] : head.headers)
    if (strcasecmp(name.c_str(), "Vary") == 0 && contains_token(value, "Accept-Encoding")) return;
  head.add("Vary", "Accept-Encoding");
}

// Every Accept-Encoding line of the request, joined.
std::string accept_encoding_of(const Exchange& ex) {
  std::string joined;
  for (const auto& h : ex.req.headers) {
    if (h.token != http::HeaderToken::accept_encoding) continue;
    if (!joined.empty()) joined.push_back(',');
    joined.append(h.value);
  }
  return joined;
}

// The rest of nginx's gzip_ok once Accept-Encoding said yes:
// gzip_http_version, gzip_proxied (only for a request with Via) and
// gzip_disable.
bool request_rules_allow(const CompressionConfig& cfg, const Exchange& ex, const ResponseHead& head) {
  if (ex.req.version < cfg.http_version) return false;
  int64_t now = ex.start_unix_ms / 1000;
  if (now == 0) now = time(nullptr);
  if (ex.req.find("via") && !proxied_allowed(cfg.proxied, ex, head, now)) return false;
  if (const http::Header* ua = ex.req.find(http::HeaderToken::user_agent)) {
    if (cfg.disable_msie6 && http::is_msie6(ua->value)) return false;
    for (const auto& re : cfg.disable)
      if (re->match(ua->value, nullptr)) return false;
  }
  return true;
}

// The head of a response whose body changes on the way (encoded or
// decoded): no length, no ranges, a weak validator.
void body_changes(ResponseHead& head) {
  head.content_length = -1;
  head.remove("Content-Length");
  head.remove("Accept-Ranges");
  http::weaken_etag(head);  // nginx 1.7.3+: an encoded body is not the same bytes
}

// What the header filter does with a head: leave the body alone, decode it
// (gunzip: a gzip body for a client that may not get gzip) or encode it.
struct Decision {
  enum class Kind : uint8_t { keep, gunzip, encode };
  Kind kind = Kind::keep;
  Coding coding = Coding::identity;
  bool vary = false;  // the response depends on Accept-Encoding, whatever this client gets
};

Decision decide(const CompressionConfig& cfg, const Exchange& ex, const ResponseHead& head) {
  Decision d;
  if (!cfg.any_on()) return d;
  if (cfg.gunzip) {
    const std::string* ce = head.find("Content-Encoding");
    if (ce && strcasecmp(ce->c_str(), "gzip") == 0) {
      d.vary = cfg.vary;
      const bool gzip_ok = parse_accept_encoding(accept_encoding_of(ex)).quality(Coding::gzip) > 0 &&
                           request_rules_allow(cfg, ex, head);
      if (!gzip_ok) d.kind = Decision::Kind::gunzip;
      return d;
    }
  }
  if (head.status != 200 && head.status != 403 && head.status != 404) return d;
  if (const std::string* ce = head.find("Content-Encoding"); ce && !ce->empty()) return d;

  const std::string* ct = head.find("Content-Type");
  const std::string_view type = ct ? std::string_view(*ct) : std::string_view();
  auto eligible = [&](bool on, const config::CompressTypes& types, int64_t min_length) {
    return on && (head.content_length < 0 || head.content_length >= min_length) && types.matches(type);
  };
  Offer offer;
  if (eligible(cfg.zstd.on, cfg.zstd.types, cfg.zstd.min_length)) offer.codings[offer.count++] = Coding::zstd;
  if (eligible(cfg.brotli.on, cfg.brotli.types, cfg.brotli.min_length)) offer.codings[offer.count++] = Coding::br;
  if (eligible(cfg.gzip, cfg.gzip_types, cfg.min_length)) offer.codings[offer.count++] = Coding::gzip;
  if (offer.count == 0) return d;
  d.vary = cfg.vary;
  const Coding coding = choose(parse_accept_encoding(accept_encoding_of(ex)), offer);
  if (coding == Coding::identity || !request_rules_allow(cfg, ex, head)) return d;
  d.kind = Decision::Kind::encode;
  d.coding = coding;
  return d;
}

}  // namespace

std::shared_ptr<http::ResponseSink> header_filter(Exchange& ex, ResponseHead& head, http::ResponseSink& next) {
  const CompressionConfig& cfg = *ex.settings().compression;
  const Decision d = decide(cfg, ex, head);
  if (d.vary) add_vary(head);
  switch (d.kind) {
    case Decision::Kind::keep:
      return nullptr;
    case Decision::Kind::gunzip: {
      head.remove("Content-Encoding");
      body_changes(head);
      if (ex.header_only) return nullptr;
      const size_t emit_at = size_t(cfg.gunzip_buffers_number) * size_t(cfg.gunzip_buffers_size);
      return std::make_shared<CompressSink>(ex, next, Coding::identity, 0, -1, emit_at);
    }
    case Decision::Kind::encode:
      break;
  }
  const Coding coding = d.coding;
  const int64_t length = head.content_length;
  head.add("Content-Encoding", std::string(coding_name(coding)));
  body_changes(head);
  if (ex.header_only) return nullptr;  // HEAD: the same head as GET, no body to encode

  const int level = coding == Coding::gzip ? cfg.gzip_level : coding == Coding::br ? cfg.brotli.level : cfg.zstd.level;
  const size_t emit_at = size_t(cfg.buffers_number) * size_t(cfg.buffers_size);
  ex.compressed_in = 0;
  ex.compressed_out = 0;
  return std::make_shared<CompressSink>(ex, next, coding, level, length, emit_at);
}

bool changes_body(const Exchange& ex, const ResponseHead& head) {
  // Exchange::send_head runs the filter only for a main request.
  if (!ex.settings().compression || ex.subrequest_depth != 0) return false;
  return decide(*ex.settings().compression, ex, head).kind != Decision::Kind::keep;
}

Precompressed open_precompressed(Exchange& ex, const std::string& path, const OpenFn& open, bool& vary) {
  Precompressed none;
  const CompressionConfig& cfg = *ex.settings().compression;
  const int gzip_static = cfg.gzip_static;
  const int br_static = cfg.brotli.static_files;
  const int zstd_static = cfg.zstd.static_files;
  if (!gzip_static && !br_static && !zstd_static) return none;
  const AcceptEncoding ae = parse_accept_encoding(accept_encoding_of(ex));
  // The request rules apply as in nginx, before any response header exists.
  const ResponseHead empty;
  const bool rules = request_rules_allow(cfg, ex, empty);
  struct Candidate {
    Coding coding;
    int setting;  // 1 on, 2 always
    const char* suffix;
  };
  // The server's order; a stable sort by the client's q-value keeps it for equal ones.
  Candidate all[] = {{Coding::zstd, zstd_static, ".zst"}, {Coding::br, br_static, ".br"}, {Coding::gzip, gzip_static, ".gz"}};
  Candidate order[3];
  int n = 0;
  for (const auto& c : all) {
    if (c.setting == 2 || (c.setting == 1 && rules && ae.quality(c.coding) > 0)) order[n++] = c;
  }
  std::stable_sort(order, order + n, [&](const Candidate& a, const Candidate& b) {
    return ae.quality(a.coding) > ae.quality(b.coding);
  });
  std::string candidate;
  for (int i = 0; i < n; ++i) {
    candidate.assign(path).append(order[i].suffix);
    if (auto file = open(candidate)) {
      if (order[i].setting == 1) vary = vary || cfg.vary;
      return {std::move(file), coding_name(order[i].coding)};
    }
  }
  // nginx: with gzip_static on and gzip_vary, a .gz beside the file makes
  // the response vary even for a client that does not get it.
  if (gzip_static == 1 && cfg.vary && !vary) {
    candidate.assign(path).append(".gz");
    if (open(candidate)) vary = true;
  }
  return none;
}

bool append_gzip_ratio(const Exchange& ex, std::string& out) {
  if (ex.compressed_out <= 0) return false;
  const int64_t in = ex.compressed_in, z = ex.compressed_out;
  // nginx's rounding: two decimals, the third rounds half up.
  int64_t whole = in / z;
  int64_t frac = (in * 100 / z) % 100;
  if ((in * 1000 / z) % 10 > 4) {
    if (++frac > 99) {
      ++whole;
      frac = 0;
    }
  }
  out.append(std::to_string(whole));
  out.push_back('.');
  if (frac < 10) out.push_back('0');
  out.append(std::to_string(frac));
  return true;
}

}  // namespace torii::compression
