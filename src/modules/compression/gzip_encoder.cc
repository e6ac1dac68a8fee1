// gzip through zlib's deflate (and inflate for gunzip).
#include <zlib.h>

#include "modules/compression/deflate_pool.h"
#include "modules/compression/encoder.h"

namespace torii::compression {

namespace {

constexpr size_t kOutStep = 16 * 1024;

class GzipEncoder final : public Encoder {
 public:
  GzipEncoder(int level, int64_t size_hint) {
    // As nginx: a response of known small size gets a smaller window and
    // hash (less memory to set up and touch); the output is the same gzip.
    int wbits = MAX_WBITS;
    int memlevel = MAX_MEM_LEVEL - 1;
    if (size_hint > 0) {
      while (wbits > 9 && size_hint < (int64_t(1) << (wbits - 1)) - 262) {
        --wbits;
        --memlevel;
      }
      if (memlevel < 1) memlevel = 1;
    }
    state_ = take_deflate(level, wbits, memlevel);
  }

  bool write(std::string_view in, Flush flush, std::string& out) override {
    if (!state_) return false;
    z_stream& z_ = state_->z;
    const int mode = flush == Flush::finish ? Z_FINISH : flush == Flush::sync ? Z_SYNC_FLUSH : Z_NO_FLUSH;
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = uInt(in.size());
    while (true) {
      const size_t before = out.size();
      out.resize(before + kOutStep);
      z_.next_out = reinterpret_cast<Bytef*>(out.data() + before);
      z_.avail_out = uInt(kOutStep);
      const int rc = deflate(&z_, mode);
      out.resize(out.size() - z_.avail_out);
      if (rc == Z_STREAM_END) return true;
      if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
      // Output space left over: zlib took all input and, for a flush, wrote
      // everything it had.
      if (z_.avail_out != 0 && z_.avail_in == 0) return mode != Z_FINISH || rc == Z_STREAM_END;
    }
  }

 private:
  DeflateState state_;
};

class GunzipDecoder final : public Encoder {
 public:
  GunzipDecoder() { ok_ = inflateInit2(&z_, MAX_WBITS + 16) == Z_OK; }
  ~GunzipDecoder() override {
    if (ok_) inflateEnd(&z_);
  }

  bool write(std::string_view in, Flush flush, std::string& out) override {
    if (!ok_) return false;
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = uInt(in.size());
    while (!trailing_garbage_) {
      if (member_ended_) {
        if (z_.avail_in == 0) break;
        // Another member follows (a concatenated .gz, as `cat a.gz b.gz`
        // makes): nginx decodes them all, one after the other.
        inflateReset(&z_);
        member_ended_ = false;
        member_read_ = false;
      }
      if (z_.avail_in == 0 && flush == Flush::none) break;
      const size_t before = out.size();
      out.resize(before + kOutStep);
      z_.next_out = reinterpret_cast<Bytef*>(out.data() + before);
      z_.avail_out = uInt(kOutStep);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      out.resize(out.size() - z_.avail_out);
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
        ++members_;
        continue;
      }
      if (rc == Z_BUF_ERROR) break;  // needs more input
      if (rc != Z_OK) {
        // Bytes after a whole member that start no member: trailing
        // garbage, ignored as before; inside a member, a broken body.
        if (members_ > 0 && !member_read_) {
          trailing_garbage_ = true;
          break;
        }
        return false;
      }
      member_read_ = true;
      if (z_.avail_out != 0 && z_.avail_in == 0) break;
    }
    // The end of the input must be the end of a gzip member.
    return flush != Flush::finish || member_ended_ || trailing_garbage_;
  }

 private:
  z_stream z_{};
  bool ok_ = false;
  bool member_ended_ = false;     // the last member read is whole
  bool member_read_ = false;      // the member being read has taken bytes
  bool trailing_garbage_ = false;
  int members_ = 0;
};

}  // namespace

std::unique_ptr<Encoder> make_gzip_encoder(int level, int64_t size_hint) {
  return std::make_unique<GzipEncoder>(level, size_hint);
}

std::unique_ptr<Encoder> make_gunzip() { return std::make_unique<GunzipDecoder>(); }

}  // namespace torii::compression
