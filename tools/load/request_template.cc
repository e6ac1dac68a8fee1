#include "load/request_template.h"

namespace torii::load {

namespace {

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  }
  return out;
}

bool has_header(const Options& o, const char* lname) {
  for (const auto& h : o.headers) {
    if (lower(h.first) == lname) return true;
  }
  return false;
}

}  // namespace

RequestTemplates build_templates(const Options& o, std::string body) {
  RequestTemplates t;
  t.body = std::move(body);
  t.head_request = o.method == "HEAD";
  bool user_host = has_header(o, "host");
  bool user_agent = has_header(o, "user-agent");
  bool with_length = !t.body.empty() || o.method == "POST" || o.method == "PUT" || o.method == "PATCH";
  std::string length = std::to_string(t.body.size());

  for (const Url& url : o.urls) {
    std::string r = o.method + " " + url.path + " HTTP/1.1\r\n";
    if (!user_host) r += "Host: " + url.authority + "\r\n";
    if (!user_agent) r += "User-Agent: torii-load\r\n";
    for (const auto& [name, value] : o.headers) r += name + ": " + value + "\r\n";
    if (with_length) r += "Content-Length: " + length + "\r\n";
    if (o.connect_per_request && !has_header(o, "connection")) r += "Connection: close\r\n";
    r += "\r\n";
    r += t.body;
    t.h1.push_back(std::move(r));
    t.hq.push_back("GET " + url.path + "\r\n");

    auto& nv = t.h2.emplace_back();
    auto& nv3 = t.h3.emplace_back();
    auto add = [&](std::string name, std::string value) {
      const std::string& n = t.storage_.emplace_back(std::move(name));
      const std::string& v = t.storage_.emplace_back(std::move(value));
      nv.push_back(nghttp2_nv{(uint8_t*)n.data(), (uint8_t*)v.data(), n.size(), v.size(),
                              NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE});
      nv3.push_back(nghttp3_nv{(uint8_t*)n.data(), (uint8_t*)v.data(), n.size(), v.size(),
                               NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE});
    };
    std::string authority = url.authority;
    for (const auto& [name, value] : o.headers) {
      if (lower(name) == "host") authority = value;
    }
    add(":method", o.method);
    add(":scheme", url.tls ? "https" : "http");
    add(":authority", authority);
    add(":path", url.path);
    if (!user_agent) add("user-agent", "torii-load");
    for (const auto& [name, value] : o.headers) {
      if (lower(name) != "host") add(lower(name), value);
    }
    if (with_length) add("content-length", length);
  }
  return t;
}

}  // namespace torii::load
