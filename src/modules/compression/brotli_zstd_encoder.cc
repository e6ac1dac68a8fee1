// br through libbrotlienc and zstd through libzstd, streaming.
#include <brotli/encode.h>
#include <zstd.h>

#include <algorithm>

#include "modules/compression/encoder.h"
#include "modules/compression/idle_pool.h"

namespace torii::compression {

std::unique_ptr<Encoder> make_gzip_encoder(int level, int64_t size_hint);  // gzip_encoder.cc

namespace {

constexpr size_t kOutStep = 16 * 1024;

class BrotliEncoder final : public Encoder {
 public:
  BrotliEncoder(int level, int64_t size_hint) : s_(BrotliEncoderCreateInstance(nullptr, nullptr, nullptr)) {
    if (!s_) return;
    BrotliEncoderSetParameter(s_, BROTLI_PARAM_QUALITY, uint32_t(level));
    // A known size lets the library pick a window that fits it.
    if (size_hint > 0) BrotliEncoderSetParameter(s_, BROTLI_PARAM_SIZE_HINT, uint32_t(std::min<int64_t>(size_hint, 1 << 30)));
  }
  ~BrotliEncoder() override {
    if (s_) BrotliEncoderDestroyInstance(s_);
  }

  bool write(std::string_view in, Flush flush, std::string& out) override {
    if (!s_) return false;
    const BrotliEncoderOperation op = flush == Flush::finish ? BROTLI_OPERATION_FINISH
                                      : flush == Flush::sync ? BROTLI_OPERATION_FLUSH
                                                             : BROTLI_OPERATION_PROCESS;
    size_t avail_in = in.size();
    const uint8_t* next_in = reinterpret_cast<const uint8_t*>(in.data());
    while (true) {
      const size_t before = out.size();
      out.resize(before + kOutStep);
      size_t avail_out = kOutStep;
      uint8_t* next_out = reinterpret_cast<uint8_t*>(out.data() + before);
      if (!BrotliEncoderCompressStream(s_, op, &avail_in, &next_in, &avail_out, &next_out, nullptr)) return false;
      out.resize(out.size() - avail_out);
      if (avail_in > 0 || BrotliEncoderHasMoreOutput(s_)) continue;
      if (op == BROTLI_OPERATION_FINISH && !BrotliEncoderIsFinished(s_)) continue;
      return true;
    }
  }

 private:
  BrotliEncoderState* s_;
};

void free_zstd(ZSTD_CCtx* c) { ZSTD_freeCCtx(c); }
using ZstdPool = IdlePool<ZSTD_CCtx, free_zstd>;

class ZstdEncoder final : public Encoder {
 public:
  ZstdEncoder(int level, int64_t size_hint) : c_(ZstdPool::take([](const ZSTD_CCtx&) { return true; })) {
    if (!c_) c_ = ZSTD_createCCtx();
    if (!c_) return;
    ZSTD_CCtx_setParameter(c_, ZSTD_c_compressionLevel, level);
    // Browsers decode zstd with a window of at most 8 MB (RFC 9659): only
    // the levels above 19 default to a larger one.
    if (level > 19) ZSTD_CCtx_setParameter(c_, ZSTD_c_windowLog, 23);
    ZSTD_CCtx_setParameter(c_, ZSTD_c_checksumFlag, 1);
    if (size_hint >= 0) ZSTD_CCtx_setPledgedSrcSize(c_, uint64_t(size_hint));
  }
  ~ZstdEncoder() override {
    if (!c_) return;
    // A context keeps its work space across a reset; the next response's
    // parameters are set afresh.
    if (ZSTD_isError(ZSTD_CCtx_reset(c_, ZSTD_reset_session_and_parameters))) {
      ZSTD_freeCCtx(c_);
      return;
    }
    ZstdPool::give(c_);
  }

  bool write(std::string_view in, Flush flush, std::string& out) override {
    if (!c_) return false;
    const ZSTD_EndDirective mode = flush == Flush::finish ? ZSTD_e_end : flush == Flush::sync ? ZSTD_e_flush : ZSTD_e_continue;
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    while (true) {
      const size_t before = out.size();
      out.resize(before + kOutStep);
      ZSTD_outBuffer output{out.data() + before, kOutStep, 0};
      const size_t left = ZSTD_compressStream2(c_, &output, &input, mode);
      out.resize(before + output.pos);
      if (ZSTD_isError(left)) return false;
      if (mode == ZSTD_e_continue ? input.pos == input.size : left == 0) return true;
    }
  }

 private:
  ZSTD_CCtx* c_;
};

}  // namespace

std::unique_ptr<Encoder> make_encoder(Coding coding, int level, int64_t size_hint) {
  switch (coding) {
    case Coding::gzip: return make_gzip_encoder(level, size_hint);
    case Coding::br: return std::make_unique<BrotliEncoder>(level, size_hint);
    case Coding::zstd: return std::make_unique<ZstdEncoder>(level, size_hint);
    case Coding::identity: break;
  }
  return nullptr;
}

}  // namespace torii::compression
