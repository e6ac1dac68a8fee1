#include "config/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "config/config.h"
#include "config/template.h"

namespace torii::config {

namespace {

// Match data is per thread: the compiled code is shared by all workers, and
// a per-call allocation would put malloc on the request path.
constexpr uint32_t kMaxPairs = 32;

struct ThreadMatchData {
  pcre2_match_data* md = pcre2_match_data_create(kMaxPairs, nullptr);
  ~ThreadMatchData() { pcre2_match_data_free(md); }
};

pcre2_match_data* thread_match_data() {
  thread_local ThreadMatchData data;
  return data.md;
}

}  // namespace

Result<std::shared_ptr<Regex>> Regex::compile(std::string_view pattern, bool caseless) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  uint32_t options = caseless ? PCRE2_CASELESS : 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &err, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof buf);
    return make_error("pcre2_compile() failed: " + std::string(reinterpret_cast<char*>(buf)) +
                      " in \"" + std::string(pattern) + "\" at \"" +
                      std::string(pattern.substr(std::min<size_t>(offset, pattern.size()))) + "\"");
  }
  // JIT is an optimisation only: when unavailable the interpreter runs.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  uint32_t count = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &count);

  std::shared_ptr<Regex> re(new Regex());
  re->code_ = code;
  re->pattern_ = std::string(pattern);
  re->capture_count_ = static_cast<int>(count);
  uint32_t names = 0;
  uint32_t entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &names);
  pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
  for (uint32_t i = 0; i < names && table; ++i) {
    // Each entry: the group number in two bytes, then the NUL-terminated name.
    const unsigned char* e = table + i * entry_size;
    int group = (e[0] << 8) | e[1];
    std::string_view name(reinterpret_cast<const char*>(e + 2));
    re->named_.emplace_back(group, define_user_variable(name));
  }
  return re;
}

Regex::~Regex() { pcre2_code_free(code_); }

bool Regex::match(std::string_view subject, Captures* captures) const {
  pcre2_match_data* md = thread_match_data();
  if (!md) return false;
  int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0,
                       md, nullptr);
  if (rc < 0) return false;  // no match, or a resource limit: treated as no match
  if (captures) {
    // rc == 0 means the ovector was too small; all pairs it holds are valid.
    uint32_t pairs = rc == 0 ? pcre2_get_ovector_count(md) : static_cast<uint32_t>(rc);
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    captures->subject.assign(subject);
    captures->spans.clear();
    for (uint32_t i = 0; i < pairs; ++i) {
      if (ov[2 * i] == PCRE2_UNSET) {
        captures->spans.emplace_back(-1, -1);
      } else {
        captures->spans.emplace_back(static_cast<int>(ov[2 * i]), static_cast<int>(ov[2 * i + 1]));
      }
    }
  }
  return true;
}

}  // namespace torii::config
