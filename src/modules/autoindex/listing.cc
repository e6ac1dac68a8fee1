#include "modules/autoindex/listing.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "http/date.h"
#include "http/uri_component.h"
#include "core/html_escape.h"
#include "log/json_escape.h"

namespace torii::autoindex {

namespace {

constexpr size_t kNameLen = 50;  // nginx's NGX_HTTP_AUTOINDEX_NAME_LEN
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

struct tm utc(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm {};
  gmtime_r(&tt, &tm);
  return tm;
}

void append_fmt(std::string& out, const char* fmt, auto... args) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, fmt, args...);
  if (n > 0) out.append(buf, std::min(static_cast<size_t>(n), sizeof buf - 1));
}

// "  1234", "   12K", "    3M": nginx rounds to the nearest unit.
void append_human_size(std::string& out, int64_t length) {
  constexpr int64_t kK = 1024, kM = 1024 * 1024, kG = 1024 * 1024 * 1024;
  int64_t size;
  char scale = 0;
  if (length > kG - 1) {
    size = length / kG + (length % kG > kG / 2 - 1 ? 1 : 0);
    scale = 'G';
  } else if (length > kM - 1) {
    size = length / kM + (length % kM > kM / 2 - 1 ? 1 : 0);
    scale = 'M';
  } else if (length > 9999) {
    size = length / kK + (length % kK > 511 ? 1 : 0);
    scale = 'K';
  } else {
    size = length;
  }
  if (scale)
    append_fmt(out, "%6lld%c", static_cast<long long>(size), scale);
  else
    append_fmt(out, " %6lld", static_cast<long long>(size));
}

std::string html(const std::vector<Entry>& entries, const ListingOptions& o) {
  std::string out;
  out.reserve(256 + entries.size() * 128);
  out += "<html>\r\n<head><title>Index of ";
  core::append_html_escaped(out, o.uri);
  out += "</title></head>\r\n<body>\r\n<h1>Index of ";
  core::append_html_escaped(out, o.uri);
  out += "</h1><hr><pre><a href=\"../\">../</a>\r\n";
  for (const Entry& e : entries) {
    out += "<a href=\"";
    http::append_uri_component(out, e.name);
    if (e.dir) out += '/';
    out += "\">";
    size_t len = e.name.size();
    bool escape = std::any_of(e.name.begin(), e.name.end(), core::html_special);
    // Names longer than 50 bytes are cut to 47 and end in "..>".
    std::string_view shown = std::string_view(e.name).substr(0, len > kNameLen ? kNameLen - 3 : len);
    if (escape)
      core::append_html_escaped(out, shown);
    else
      out += shown;
    if (len > kNameLen) {
      out += "..&gt;</a>";
    } else {
      if (e.dir && len < kNameLen) {
        out += '/';
        ++len;
      }
      out += "</a>";
      out.append(kNameLen - len, ' ');
    }
    out += ' ';
    struct tm tm = utc(e.mtime + o.utc_offset_sec);
    append_fmt(out, "%02d-%s-%d %02d:%02d ", tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
               tm.tm_min);
    if (o.exact_size) {
      if (e.dir)
        out += "                  -";
      else
        append_fmt(out, "%19lld", static_cast<long long>(e.size));
    } else {
      if (e.dir)
        out += "      -";
      else
        append_human_size(out, e.size);
    }
    out += "\r\n";
  }
  out += "</pre><hr></body>\r\n</html>\r\n";
  return out;
}

const char* type_of(const Entry& e) { return e.dir ? "directory" : e.file ? "file" : "other"; }

std::string json(const std::vector<Entry>& entries, std::string_view callback) {
  std::string out;
  if (!callback.empty()) {
    out += "/* callback */\r\n";
    out += callback;
    out += '(';
  }
  out += '[';
  bool first = true;
  for (const Entry& e : entries) {
    if (!first) out += ',';
    first = false;
    out += "\r\n{ \"name\":\"";
    log::append_json_escaped(out, e.name);
    out += "\", \"type\":\"";
    out += type_of(e);
    out += "\", \"mtime\":\"";
    char date[http::kHttpDateLen];
    http::format_http_date(e.mtime, date);
    out.append(date, sizeof date);
    if (e.file) {
      out += "\", \"size\":";
      out += std::to_string(e.size);
    } else {
      out += '"';
    }
    out += " }";
  }
  out += "\r\n]";
  if (!callback.empty()) out += ");";
  return out;
}

std::string xml(const std::vector<Entry>& entries) {
  std::string out = "<?xml version=\"1.0\"?>\r\n<list>\r\n";
  for (const Entry& e : entries) {
    const char* type = type_of(e);
    out += '<';
    out += type;
    struct tm tm = utc(e.mtime);
    append_fmt(out, " mtime=\"%4d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
               tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (e.file) {
      out += "\" size=\"";
      out += std::to_string(e.size);
    }
    out += "\">";
    core::append_html_escaped(out, e.name);
    out += "</";
    out += type;
    out += ">\r\n";
  }
  out += "</list>\r\n";
  return out;
}

}  // namespace

void sort_entries(std::vector<Entry>& entries) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.dir != b.dir) return a.dir;
    return std::strcmp(a.name.c_str(), b.name.c_str()) < 0;
  });
}

bool valid_callback(std::string_view name) {
  if (name.size() > 128) return false;
  for (char ch : name) {
    char c = static_cast<char>(ch | 0x20);
    if ((c >= 'a' && c <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.') continue;
    return false;
  }
  return true;
}

std::string render_listing(const std::vector<Entry>& entries, const ListingOptions& options) {
  using F = config::AutoindexConfig::Format;
  switch (options.format) {
    case F::json: return json(entries, {});
    case F::jsonp: return json(entries, options.callback);
    case F::xml: return xml(entries);
    case F::html: break;
  }
  return html(entries, options);
}

}  // namespace torii::autoindex
