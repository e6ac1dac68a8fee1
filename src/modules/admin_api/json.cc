#include "modules/admin_api/json.h"

#include <cstdint>

namespace torii::admin_api {

namespace {

constexpr int kMaxDepth = 32;

class Reader {
 public:
  explicit Reader(std::string_view t) : t_(t) {}

  Result<JsonValue> document() {
    JsonValue v;
    if (!value(v, 0)) return fail();
    skip_space();
    if (pos_ != t_.size()) {
      error_ = "unexpected data after the JSON value";
      return fail();
    }
    return v;
  }

 private:
  Error fail() const { return Error{error_ + " at offset " + std::to_string(pos_)}; }
  bool bad(const char* why) {
    if (error_.empty()) error_ = why;
    return false;
  }
  void skip_space() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(pos_, word.size()) != word) return bad("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool value(JsonValue& v, int depth) {
    if (depth > kMaxDepth) return bad("nested too deeply");
    skip_space();
    if (pos_ >= t_.size()) return bad("unexpected end of JSON");
    const char c = t_[pos_];
    switch (c) {
      case '{': return object(v, depth);
      case '[': return array(v, depth);
      case '"': v.type = JsonValue::Type::string; return string(v.text);
      case 't': v.type = JsonValue::Type::boolean; v.boolean = true; return literal("true");
      case 'f': v.type = JsonValue::Type::boolean; return literal("false");
      case 'n': v.type = JsonValue::Type::null; return literal("null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number(v);
        return bad("unexpected character");
    }
  }

  bool digits() {
    const size_t start = pos_;
    while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }

  bool number(JsonValue& v) {
    const size_t start = pos_;
    if (t_[pos_] == '-') ++pos_;
    if (pos_ < t_.size() && t_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return bad("invalid number");
    }
    if (pos_ < t_.size() && t_[pos_] == '.') {
      ++pos_;
      if (!digits()) return bad("invalid number");
    }
    if (pos_ < t_.size() && (t_[pos_] == 'e' || t_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < t_.size() && (t_[pos_] == '+' || t_[pos_] == '-')) ++pos_;
      if (!digits()) return bad("invalid number");
    }
    v.type = JsonValue::Type::number;
    v.text = std::string(t_.substr(start, pos_ - start));
    return true;
  }

  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  bool hex4(uint32_t& out) {
    if (t_.size() - pos_ < 4) return bad("invalid \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = t_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9') out |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') out |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') out |= uint32_t(c - 'A' + 10);
      else return bad("invalid \\u escape");
    }
    return true;
  }

  // One UTF-8 sequence from the input, copied when it is well formed.
  bool utf8(std::string& out) {
    const auto b0 = uint8_t(t_[pos_]);
    int len = 0;
    uint32_t cp = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) { len = 2; cp = b0 & 0x1f; }
    else if (b0 >= 0xe0 && b0 <= 0xef) { len = 3; cp = b0 & 0x0f; }
    else if (b0 >= 0xf0 && b0 <= 0xf4) { len = 4; cp = b0 & 0x07; }
    else return bad("invalid UTF-8");
    if (t_.size() - pos_ < size_t(len)) return bad("invalid UTF-8");
    for (int i = 1; i < len; ++i) {
      const auto b = uint8_t(t_[pos_ + size_t(i)]);
      if ((b & 0xc0) != 0x80) return bad("invalid UTF-8");
      cp = (cp << 6) | (b & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are refused.
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return bad("invalid UTF-8");
    out.append(t_.substr(pos_, size_t(len)));
    pos_ += size_t(len);
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // the opening quote
    while (true) {
      if (pos_ >= t_.size()) return bad("unterminated string");
      const auto c = uint8_t(t_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return bad("control character in string");
      if (c >= 0x80) {
        if (!utf8(out)) return false;
        continue;
      }
      ++pos_;
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (pos_ >= t_.size()) return bad("unterminated string");
      const char e = t_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xdc00 && cp <= 0xdfff) return bad("unpaired surrogate");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t low = 0;
            if (t_.substr(pos_, 2) != "\\u") return bad("unpaired surrogate");
            pos_ += 2;
            if (!hex4(low)) return false;
            if (low < 0xdc00 || low > 0xdfff) return bad("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          put_utf8(out, cp);
          break;
        }
        default: return bad("invalid escape");
      }
    }
  }

  bool array(JsonValue& v, int depth) {
    v.type = JsonValue::Type::array;
    ++pos_;
    skip_space();
    if (pos_ < t_.size() && t_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      JsonValue item;
      if (!value(item, depth + 1)) return false;
      v.items.push_back(std::move(item));
      skip_space();
      if (pos_ >= t_.size()) return bad("unterminated array");
      if (t_[pos_] == ']') {
        ++pos_;
        return true;
      }
      if (t_[pos_] != ',') return bad("expected ',' or ']'");
      ++pos_;
    }
  }

  bool object(JsonValue& v, int depth) {
    v.type = JsonValue::Type::object;
    ++pos_;
    skip_space();
    if (pos_ < t_.size() && t_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_space();
      if (pos_ >= t_.size() || t_[pos_] != '"') return bad("expected a member name");
      std::string key;
      if (!string(key)) return false;
      for (const auto& m : v.members)
        if (m.name == key) return bad("duplicate member name");
      skip_space();
      if (pos_ >= t_.size() || t_[pos_] != ':') return bad("expected ':'");
      ++pos_;
      JsonValue member;
      if (!value(member, depth + 1)) return false;
      v.members.push_back(JsonMember{std::move(key), std::move(member)});
      skip_space();
      if (pos_ >= t_.size()) return bad("unterminated object");
      if (t_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (t_[pos_] != ',') return bad("expected ',' or '}'");
      ++pos_;
    }
  }

  std::string_view t_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

Result<JsonValue> parse_json(std::string_view text) { return Reader(text).document(); }

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char ch : s) {
    const auto c = uint8_t(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  out += '"';
}

}  // namespace torii::admin_api
