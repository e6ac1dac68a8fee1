#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "config/cache_config.h"
#include "config/cgi_config.h"
#include "config/config.h"
#include "config/directives.h"
#include "config/loader.h"
#include "rewrite_test_util.h"

namespace torii::config {
namespace {

namespace fs = std::filesystem;

// The names of an `index` list, as written.
std::vector<std::string> sources(const std::vector<config::Template>& list) {
  std::vector<std::string> out;
  for (const auto& t : list) out.push_back(t.source);
  return out;
}

// A folder of config files that disappears with the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "torii-config-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
    path_ += '/';
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& rel, const std::string& text) const {
    fs::path p = path_ + rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::string path_;
};

std::string load_error(const std::string& text) {
  auto r = load_from_string(text, "/p/");
  return r.ok() ? std::string() : r.error();
}

std::shared_ptr<const Config> load_ok(const std::string& text) {
  auto r = load_from_string(text, "/p/");
  EXPECT_TRUE(r.ok()) << r.error();
  return r.ok() ? *r : nullptr;
}

const Location* loc(const Server& s, std::string_view path) { return find_location(s, path, nullptr); }

// ---- values ---------------------------------------------------------------------

TEST(ConfigValues, Sizes) {
  int64_t v = 0;
  ASSERT_TRUE(parse_size("10", v));
  EXPECT_EQ(v, 10);
  ASSERT_TRUE(parse_size("1k", v));
  EXPECT_EQ(v, 1024);
  ASSERT_TRUE(parse_size("8K", v));
  EXPECT_EQ(v, 8192);
  ASSERT_TRUE(parse_size("1m", v));
  EXPECT_EQ(v, 1 << 20);
  ASSERT_TRUE(parse_size("2G", v));
  EXPECT_EQ(v, int64_t{2} << 30);
  EXPECT_FALSE(parse_size("", v));
  EXPECT_FALSE(parse_size("k", v));
  EXPECT_FALSE(parse_size("1x", v));
  EXPECT_FALSE(parse_size("-1", v));
  EXPECT_FALSE(parse_size("99999999999999999999k", v));
}

TEST(ConfigValues, Times) {
  int64_t v = 0;
  ASSERT_TRUE(parse_time_ms("90", v));
  EXPECT_EQ(v, 90'000);
  ASSERT_TRUE(parse_time_ms("10s", v));
  EXPECT_EQ(v, 10'000);
  ASSERT_TRUE(parse_time_ms("5m", v));
  EXPECT_EQ(v, 300'000);
  ASSERT_TRUE(parse_time_ms("1h", v));
  EXPECT_EQ(v, 3'600'000);
  ASSERT_TRUE(parse_time_ms("1d", v));
  EXPECT_EQ(v, 86'400'000);
  ASSERT_TRUE(parse_time_ms("500ms", v));
  EXPECT_EQ(v, 500);
  ASSERT_TRUE(parse_time_ms("1y", v));
  EXPECT_EQ(v, int64_t{365} * 86'400'000);
  ASSERT_TRUE(parse_time_ms("1h30m", v));
  EXPECT_EQ(v, 5'400'000);
  ASSERT_TRUE(parse_time_ms("1h 30m 5", v));
  EXPECT_EQ(v, 5'405'000);
  ASSERT_TRUE(parse_time_ms("0", v));
  EXPECT_EQ(v, 0);
  EXPECT_FALSE(parse_time_ms("30m1h", v));  // units must shrink
  EXPECT_FALSE(parse_time_ms("5x", v));
  EXPECT_FALSE(parse_time_ms("", v));
  EXPECT_FALSE(parse_time_ms("-1", v));
  EXPECT_FALSE(parse_time_ms("s", v));
}

// ---- every directive, typed --------------------------------------------------------

const char* kFull = R"(
user nobody;
worker_processes 3;
worker_rlimit_nofile 65535;
pid run/torii.pid;
error_log logs/main-error.log warn;

events {
    worker_connections 4096;
    multi_accept on;
    use epoll;
}

http {
    include mime.types;
    default_type application/octet-stream;
    types_hash_max_size 2048;
    types_hash_bucket_size 64;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay off;
    keepalive_timeout 65 60;
    keepalive_requests 500;
    open_file_cache max=1000 inactive=20s;
    open_file_cache_valid 30s;
    open_file_cache_min_uses 2;
    open_file_cache_errors on;
    server_tokens off;
    access_log logs/http.log main buffer=32k flush=5s;
    log_format main escape=json '$remote_addr - $remote_user [$time_local] '
                                '"$request" $status';
    gzip off;
    gzip_vary off;
    dav_methods off;
    client_header_timeout 30s;
    client_header_buffer_size 2k;
    large_client_header_buffers 8 16k;
    client_body_timeout 20s;
    client_max_body_size 10m;
    client_body_buffer_size 128k;
    send_timeout 1m;
    log_not_found off;
    etag off;
    ignore_invalid_headers off;
    underscores_in_headers on;
    merge_slashes off;
    error_log stderr info;
    root /var/www;
    index index.htm default.html;
    error_page 500 502 503 504 /50x.html;
    add_header X-Http http;
    expires 1h;
    allow 10.0.0.0/8;
    deny all;

    server {
        listen 127.0.0.1:8080 default_server reuseport backlog=1024;
        listen [::1]:8080 ipv6only=off;
        server_name Example.com *.example.com;
        root html/;
        add_header X-Server "$host" always;

        location / {
            try_files $uri $uri/ /index.html =404;
        }
        location /files/ {
            alias data/files/;
            expires modified -30m;
            internal;
            location /files/deep/ { }
        }
        location = /health {
            access_log off;
            return 200 "ok\n";
        }
        location /old {
            return https://example.com$request_uri;
        }
        location /api/ {
            limit_except GET POST {
                allow 192.168.1.0/24;
                deny all;
            }
            error_page 404 =200 /empty.gif;
            error_page 403 = @fallback;
            add_header X-Loc loc;
            expires max;
            location /api/v2/ {
                expires epoch;
            }
        }
        location @fallback { return 204; }
    }

    server {
        listen 8081;
        server_name .other.org;
        return 444;
        keepalive_timeout 5;
        client_header_timeout 1s;
        allow 2001:db8::/32;
        error_log logs/other.log;
        open_file_cache off;
    }

    server { }
}
)";

TEST(ConfigLoad, EveryDirectiveTyped) {
  TempDir dir;
  dir.write("conf/mime.types", "types { text/html html; image/png PNG; }");
  std::string main = dir.write("conf/torii.conf", kFull);
  auto r = load(main, dir.path(), "");
  ASSERT_TRUE(r.ok()) << r.error();
  const Config& c = **r;
  const std::string& p = dir.path();

  EXPECT_EQ(c.prefix, p);
  EXPECT_EQ(c.conf_file, main);
  EXPECT_EQ(c.user, "nobody");
  EXPECT_EQ(c.worker_processes, 3);
  EXPECT_EQ(c.worker_rlimit_nofile, 65535u);
  EXPECT_EQ(c.pid_path, p + "run/torii.pid");
  EXPECT_EQ(c.error_log.path, p + "logs/main-error.log");
  EXPECT_EQ(c.error_log.level, LogLevel::warn);
  EXPECT_EQ(c.worker_connections, 4096u);
  EXPECT_TRUE(c.multi_accept);

  ASSERT_EQ(c.sources.size(), 2u);
  EXPECT_EQ(c.sources[0].first, main);
  EXPECT_EQ(c.sources[0].second, kFull);
  EXPECT_EQ(c.sources[1].first, p + "conf/mime.types");

  ASSERT_EQ(c.log_formats.count("main"), 1u);
  const LogFormat& fmt = *c.log_formats.at("main");
  EXPECT_TRUE(fmt.json_escape);
  EXPECT_EQ(fmt.format.source, "$remote_addr - $remote_user [$time_local] \"$request\" $status");
  ASSERT_EQ(c.log_formats.count("combined"), 1u);
  EXPECT_EQ(c.log_formats.at("combined")->format.source,
            "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent "
            "\"$http_referer\" \"$http_user_agent\"");

  ASSERT_EQ(c.servers.size(), 3u);
  const Server& s1 = *c.servers[0];
  const Server& s2 = *c.servers[1];
  const Server& s3 = *c.servers[2];

  // Server-level settings from http.
  EXPECT_EQ(s1.client_header_timeout, Ms(30'000));
  EXPECT_EQ(s1.client_header_buffer_size, 2048u);
  EXPECT_EQ(s1.large_client_header_buffers.number, 8u);
  EXPECT_EQ(s1.large_client_header_buffers.size, 16u * 1024);
  EXPECT_FALSE(s1.ignore_invalid_headers);
  EXPECT_TRUE(s1.underscores_in_headers);
  EXPECT_FALSE(s1.merge_slashes);
  EXPECT_EQ(s2.client_header_timeout, Ms(1'000));

  // Listens and names.
  ASSERT_EQ(s1.listens.size(), 2u);
  EXPECT_EQ(s1.listens[0].text, "127.0.0.1:8080");
  EXPECT_TRUE(s1.listens[0].default_server);
  EXPECT_TRUE(s1.listens[0].reuseport);
  EXPECT_EQ(s1.listens[0].backlog, 1024);
  const auto* sin = reinterpret_cast<const sockaddr_in*>(&s1.listens[0].addr);
  EXPECT_EQ(sin->sin_family, AF_INET);
  EXPECT_EQ(ntohs(sin->sin_port), 8080);
  EXPECT_EQ(ntohl(sin->sin_addr.s_addr), 0x7f000001u);
  EXPECT_EQ(s1.listens[1].text, "[::1]:8080");
  EXPECT_FALSE(s1.listens[1].ipv6only);
  EXPECT_EQ(s1.listens[1].addr.ss_family, AF_INET6);
  ASSERT_EQ(s1.names.size(), 2u);
  EXPECT_EQ(s1.names[0].name, "example.com");
  EXPECT_EQ(s1.names[1].kind, ServerName::Kind::wildcard_front);
  EXPECT_EQ(s2.listens[0].text, "0.0.0.0:8081");
  EXPECT_EQ(s3.listens[0].text, "0.0.0.0:80");

  ASSERT_EQ(c.listen_groups.size(), 4u);
  EXPECT_EQ(c.listen_groups[0].listen.text, "127.0.0.1:8080");
  EXPECT_TRUE(c.listen_groups[0].listen.reuseport);
  EXPECT_EQ(c.listen_groups[0].default_server.get(), &s1);
  EXPECT_EQ(c.listen_groups[3].default_server.get(), &s3);

  // Server settings: http values, root overridden, add_header replaced.
  const LocationSettings& ss = s1.settings;
  EXPECT_EQ(ss.root, p + "html");
  EXPECT_EQ(ss.default_type, "application/octet-stream");
  ASSERT_TRUE(ss.types);
  EXPECT_EQ(ss.types->at("png"), "image/png");
  EXPECT_EQ(mime_type(ss, "/a/b.HTML"), "text/html");
  EXPECT_EQ(mime_type(ss, "/a/b.png"), "image/png");
  EXPECT_EQ(mime_type(ss, "/a/b.gif"), "application/octet-stream");  // not in this types
  EXPECT_EQ(mime_type(ss, "/a.b/noext"), "application/octet-stream");
  EXPECT_TRUE(ss.sendfile);
  EXPECT_TRUE(ss.tcp_nopush);
  EXPECT_FALSE(ss.tcp_nodelay);
  EXPECT_EQ(ss.keepalive_timeout, Ms(65'000));
  EXPECT_EQ(ss.keepalive_header, Ms(60'000));
  EXPECT_EQ(ss.keepalive_requests, 500u);
  EXPECT_TRUE(ss.open_file_cache.enabled);
  EXPECT_EQ(ss.open_file_cache.max, 1000u);
  EXPECT_EQ(ss.open_file_cache.inactive, Ms(20'000));
  EXPECT_EQ(ss.open_file_cache.valid, Ms(30'000));
  EXPECT_EQ(ss.open_file_cache.min_uses, 2u);
  EXPECT_TRUE(ss.open_file_cache.errors);
  EXPECT_FALSE(ss.server_tokens);
  ASSERT_EQ(ss.access_logs.size(), 1u);
  EXPECT_EQ(ss.access_logs[0].path, p + "logs/http.log");
  EXPECT_EQ(ss.access_logs[0].format.get(), &fmt);
  EXPECT_EQ(ss.access_logs[0].buffering.size, 32u * 1024);
  EXPECT_EQ(ss.access_logs[0].buffering.flush, Ms(5'000));
  EXPECT_EQ(ss.client_body_timeout, Ms(20'000));
  EXPECT_EQ(ss.client_max_body_size, 10 << 20);
  EXPECT_EQ(ss.client_body_buffer_size, 128u * 1024);
  EXPECT_EQ(ss.send_timeout, Ms(60'000));
  EXPECT_FALSE(ss.log_not_found);
  EXPECT_FALSE(ss.etag);
  ASSERT_TRUE(ss.error_log);
  EXPECT_EQ(ss.error_log->path, "stderr");
  EXPECT_EQ(ss.error_log->level, LogLevel::info);
  EXPECT_EQ(sources(ss.index), (std::vector<std::string>{"index.htm", "default.html"}));
  ASSERT_EQ(ss.error_pages.size(), 1u);
  EXPECT_EQ(ss.error_pages[0].codes, (std::vector<int>{500, 502, 503, 504}));
  EXPECT_EQ(ss.error_pages[0].response_code, -1);
  EXPECT_EQ(ss.error_pages[0].uri.source, "/50x.html");
  ASSERT_EQ(ss.add_headers.size(), 1u);
  EXPECT_EQ(ss.add_headers[0].name, "X-Server");
  EXPECT_EQ(ss.add_headers[0].value.parts[0].variable.id, VarId::host);
  EXPECT_TRUE(ss.add_headers[0].always);
  EXPECT_EQ(ss.expires.kind, Expires::Kind::after_access);
  EXPECT_EQ(ss.expires.seconds, 3600);
  ASSERT_EQ(ss.access_rules.size(), 2u);
  EXPECT_TRUE(ss.access_rules[0].allow);
  EXPECT_EQ(ss.access_rules[0].addr[0], 10);
  EXPECT_EQ(ss.access_rules[0].mask[0], 0xff);
  EXPECT_EQ(ss.access_rules[0].mask[1], 0);
  EXPECT_FALSE(ss.access_rules[1].allow);
  EXPECT_TRUE(ss.access_rules[1].all);

  // Locations.
  const Location* root = loc(s1, "/x");
  ASSERT_NE(root, nullptr);
  ASSERT_EQ(root->settings.try_files.size(), 4u);
  EXPECT_EQ(root->settings.try_files[1].source, "$uri/");
  EXPECT_EQ(root->settings.try_files[3].source, "=404");
  EXPECT_EQ(root->line, 63);  // line of "location / {" in kFull
  EXPECT_EQ(root->file, main);

  const Location* files = loc(s1, "/files/a");
  ASSERT_NE(files, nullptr);
  EXPECT_EQ(files->settings.alias, p + "data/files/");
  EXPECT_EQ(files->settings.expires.kind, Expires::Kind::after_modified);
  EXPECT_EQ(files->settings.expires.seconds, -1800);
  EXPECT_TRUE(files->settings.internal);
  EXPECT_TRUE(files->settings.try_files.empty());  // not inherited
  const Location* deep = loc(s1, "/files/deep/x");
  ASSERT_NE(deep, nullptr);
  EXPECT_NE(deep, files);
  EXPECT_TRUE(deep->settings.internal);  // nginx merges "internal" down
  EXPECT_EQ(deep->settings.alias, p + "data/files/");

  const Location* health = loc(s1, "/health");
  ASSERT_NE(health, nullptr);
  EXPECT_EQ(health->match, Location::Match::exact);
  EXPECT_TRUE(health->settings.access_log_off);
  EXPECT_TRUE(health->settings.access_logs.empty());
  ASSERT_TRUE(first_return(health->settings.rewrite));
  EXPECT_EQ(first_return(health->settings.rewrite)->code, 200);
  EXPECT_EQ(first_return(health->settings.rewrite)->text.source, "ok\n");

  const Location* old = loc(s1, "/old");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(first_return(old->settings.rewrite)->code, 302);
  EXPECT_EQ(first_return(old->settings.rewrite)->text.source, "https://example.com$request_uri");

  const Location* api = loc(s1, "/api/x");
  ASSERT_NE(api, nullptr);
  ASSERT_TRUE(api->settings.limit_except);
  EXPECT_EQ(api->settings.limit_except->methods,
            (std::vector<http::Method>{http::Method::get, http::Method::head, http::Method::post}));
  ASSERT_TRUE(api->settings.limit_except->location);
  ASSERT_EQ(api->settings.limit_except->location->settings.access_rules.size(), 2u);
  EXPECT_EQ(api->settings.limit_except->location->settings.access_rules[0].addr[2], 1);
  EXPECT_EQ(api->settings.limit_except->location->settings.access_rules[0].mask[2], 0xff);
  EXPECT_EQ(api->settings.limit_except->location->settings.access_rules[0].mask[3], 0);
  ASSERT_EQ(api->settings.error_pages.size(), 2u);  // replaced the inherited one
  EXPECT_EQ(api->settings.error_pages[0].response_code, 200);
  EXPECT_EQ(api->settings.error_pages[1].response_code, 0);
  EXPECT_EQ(api->settings.error_pages[1].uri.source, "@fallback");
  ASSERT_EQ(api->settings.add_headers.size(), 1u);
  EXPECT_EQ(api->settings.add_headers[0].name, "X-Loc");
  EXPECT_EQ(api->settings.expires.kind, Expires::Kind::max);
  EXPECT_EQ(api->settings.access_rules.size(), 2u);  // inherited from http

  const Location* v2 = loc(s1, "/api/v2/x");
  ASSERT_NE(v2, nullptr);
  EXPECT_NE(v2, api);
  EXPECT_FALSE(v2->settings.limit_except);  // not inherited
  ASSERT_EQ(v2->settings.add_headers.size(), 1u);
  EXPECT_EQ(v2->settings.add_headers[0].name, "X-Loc");
  EXPECT_EQ(v2->settings.error_pages.size(), 2u);
  EXPECT_EQ(v2->settings.expires.kind, Expires::Kind::epoch);

  const Location* fb = find_named_location(s1, "@fallback");
  ASSERT_NE(fb, nullptr);
  EXPECT_EQ(first_return(fb->settings.rewrite)->code, 204);
  EXPECT_FALSE(first_return(fb->settings.rewrite)->has_text);

  // Second server.
  ASSERT_TRUE(first_return(s2.rewrite));
  EXPECT_EQ(first_return(s2.rewrite)->code, 444);
  EXPECT_FALSE(first_return(s2.settings.rewrite));
  EXPECT_EQ(s2.settings.keepalive_timeout, Ms(5'000));
  EXPECT_EQ(s2.settings.keepalive_header, Ms(0));
  EXPECT_FALSE(s2.settings.open_file_cache.enabled);
  ASSERT_EQ(s2.settings.access_rules.size(), 1u);
  EXPECT_EQ(s2.settings.access_rules[0].family, AF_INET6);
  EXPECT_EQ(s2.settings.access_rules[0].mask[3], 0xff);
  EXPECT_EQ(s2.settings.access_rules[0].mask[4], 0);
  EXPECT_EQ(s2.settings.error_log->path, p + "logs/other.log");
  EXPECT_EQ(s2.settings.error_log->level, LogLevel::error);
  ASSERT_EQ(s2.settings.add_headers.size(), 1u);
  EXPECT_EQ(s2.settings.add_headers[0].name, "X-Http");
  EXPECT_EQ(s2.settings.root, "/var/www");
  EXPECT_TRUE(s2.names[0].matches_bare);
}

// The main file of a benchmark in the seeds (paths moved into the test folder).
TEST(ConfigLoad, SeedBenchmarkMainConfig) {
  TempDir dir;
  dir.write("mime.types", "types { text/html html; text/css css; }");
  dir.write("conf.d/whoami.conf",
            "server { listen 8001; server_name benchmark.whoami; access_log off; error_log /dev/null crit;\n"
            "  location / { return 200 ok; } }\n");
  std::string main = dir.write("nginx.conf", R"(
user nginx;
worker_processes auto;
worker_rlimit_nofile 200000;
pid /var/run/nginx.pid;
events { worker_connections 10000; use epoll; multi_accept on; }
http {
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_timeout 300; keepalive_requests 10000;
  types_hash_max_size 2048;
  open_file_cache max=200000 inactive=300s; open_file_cache_valid 300s;
  open_file_cache_min_uses 2; open_file_cache_errors on;
  server_tokens off; dav_methods off;
  include mime.types;
  default_type application/octet-stream;
  access_log /var/log/nginx/access.log combined;
  error_log /var/log/nginx/error.log warn;
  gzip off; gzip_vary off;
  include conf.d/*.conf;
  include sites-enabled/*.conf;
}
)");
  auto r = load(main, dir.path(), "");
  ASSERT_TRUE(r.ok()) << r.error();
  const Config& c = **r;
  EXPECT_EQ(c.worker_rlimit_nofile, 200000u);
  EXPECT_EQ(c.worker_connections, 10000u);
  EXPECT_EQ(c.pid_path, "/var/run/nginx.pid");
  ASSERT_EQ(c.servers.size(), 1u);
  const Server& s = *c.servers[0];
  EXPECT_EQ(s.listens[0].text, "0.0.0.0:8001");
  EXPECT_TRUE(s.settings.access_log_off);
  EXPECT_EQ(s.settings.error_log->path, "/dev/null");
  EXPECT_EQ(s.settings.error_log->level, LogLevel::crit);
  EXPECT_EQ(s.settings.keepalive_timeout, Ms(300'000));
  EXPECT_EQ(s.settings.keepalive_requests, 10000u);
  EXPECT_EQ(s.settings.open_file_cache.max, 200000u);
  EXPECT_EQ(s.settings.open_file_cache.inactive, Ms(300'000));
  EXPECT_EQ(mime_type(s.settings, "/x.css"), "text/css");
  const Location* l = find_location(s, "/anything", nullptr);
  ASSERT_NE(l, nullptr);
  EXPECT_TRUE(l->settings.access_log_off);
  EXPECT_EQ(find_server(c.listen_groups[0], "benchmark.whoami").names[0].name, "benchmark.whoami");
}

TEST(ConfigLoad, Defaults) {
  auto cfg = load_ok("http { server { } }");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->pid_path, "/p/logs/torii.pid");
  EXPECT_EQ(cfg->error_log.path, "/p/logs/error.log");
  EXPECT_EQ(cfg->error_log.level, LogLevel::error);
  EXPECT_EQ(cfg->worker_processes, 1);
  const LocationSettings& s = cfg->servers[0]->settings;
  EXPECT_EQ(s.root, "/p/html");
  EXPECT_EQ(s.client_body_temp_path, "/p/client_body_temp");
  EXPECT_EQ(sources(s.index), std::vector<std::string>{"index.html"});
  EXPECT_EQ(s.default_type, "text/plain");
  EXPECT_EQ(mime_type(s, "/x.gif"), "image/gif");  // nginx's built-in types
  ASSERT_EQ(s.access_logs.size(), 1u);
  EXPECT_EQ(s.access_logs[0].path, "/p/logs/access.log");
  EXPECT_EQ(s.access_logs[0].format->name, "combined");
  EXPECT_EQ(cfg->listen_groups.size(), 1u);
  EXPECT_EQ(cfg->listen_groups[0].listen.text, "0.0.0.0:80");
}

TEST(ConfigLoad, ClientBodyTempPath) {
  auto cfg = load_ok("http { client_body_temp_path bodies/ 1 2; server { location /up { } } }");
  ASSERT_TRUE(cfg);
  const auto& srv = *cfg->servers[0];
  EXPECT_EQ(srv.settings.client_body_temp_path, "/p/bodies");  // under the prefix
  EXPECT_EQ(srv.settings.client_body_temp_levels, (std::array<uint8_t, 3>{1, 2, 0}));
  EXPECT_EQ(srv.locations.front()->settings.client_body_temp_path, "/p/bodies");  // inherited
}

TEST(ConfigLoad, WorkerProcessesAuto) {
  auto cfg = load_ok("worker_processes auto;");
  ASSERT_TRUE(cfg);
  unsigned hc = std::thread::hardware_concurrency();
  EXPECT_EQ(cfg->worker_processes, hc ? static_cast<int>(hc) : 1);
}

TEST(ConfigLoad, UserWarnsWhenNotRoot) {
  auto cfg = load_ok("\nuser www-data;");
  ASSERT_TRUE(cfg);
  if (::geteuid() == 0) {
    EXPECT_TRUE(load_warnings().empty());
  } else {
    ASSERT_EQ(load_warnings().size(), 1u);
    EXPECT_EQ(load_warnings()[0].substr(0, 28), "string:2: the \"user\" directi");
  }
}

// Two `types` blocks in one context add up (nginx); a repeated extension
// takes the later type and is warned about; a block of its own replaces the
// inherited table.
TEST(ConfigLoad, TypesBlocksInOneContextAddUp) {
  auto cfg = load_ok(
      "http { types { text/css css; text/plain log; }\n"
      "  types { text/javascript mjs; text/x-log LOG; }\n"
      "  server { listen 8080; location /own/ { types { text/x-own own; } } } }");
  ASSERT_TRUE(cfg);
  ASSERT_EQ(load_warnings().size(), 1u);
  EXPECT_EQ(load_warnings()[0],
            "string:2: duplicate extension \"log\", content type: \"text/x-log\", previous content type: "
            "\"text/plain\"");
  const LocationSettings& ss = cfg->servers[0]->settings;
  EXPECT_EQ(mime_type(ss, "/a.css"), "text/css");
  EXPECT_EQ(mime_type(ss, "/a.mjs"), "text/javascript");
  EXPECT_EQ(mime_type(ss, "/a.log"), "text/x-log");
  const Location* own = loc(*cfg->servers[0], "/own/a.own");
  ASSERT_TRUE(own);
  EXPECT_EQ(mime_type(own->settings, "/own/a.own"), "text/x-own");
  EXPECT_EQ(mime_type(own->settings, "/own/a.css"), own->settings.default_type);
}

TEST(ConfigLoad, ExtraDirectivesFromCommandLine) {
  TempDir dir;
  std::string main = dir.write("torii.conf", "http { }");
  auto r = load(main, dir.path(), "worker_processes 2; pid /tmp/x.pid;");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ((*r)->worker_processes, 2);
  EXPECT_EQ((*r)->pid_path, "/tmp/x.pid");
  auto bad = load(main, dir.path(), "bogus 1;");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "command line:1: unknown directive \"bogus\"");
}

TEST(ConfigLoad, RelativeConfPathUsesPrefix) {
  TempDir dir;
  dir.write("conf/torii.conf", "worker_processes 4;");
  auto r = load("conf/torii.conf", dir.path(), "");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ((*r)->worker_processes, 4);
  auto missing = load("conf/none.conf", dir.path(), "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "open() \"" + dir.path() + "conf/none.conf\" failed (2: No such file or directory)");
}

// ---- include ------------------------------------------------------------------

TEST(ConfigLoad, IncludeGlobsRelativeToMainFile) {
  TempDir dir;
  dir.write("conf/conf.d/b.conf", "server { listen 8002; server_name b; }\n");
  dir.write("conf/conf.d/a.conf", "server { listen 8001; server_name a; include snippets/*.conf; }\n");
  dir.write("conf/conf.d/skip.txt", "this is not a config");
  dir.write("conf/snippets/h.conf", "add_header X-Snippet yes;\n");
  std::string main = dir.write("conf/torii.conf",
                               "http {\n  include conf.d/*.conf;\n  include nothing/*.conf;\n}\n");
  auto r = load(main, dir.path(), "");
  ASSERT_TRUE(r.ok()) << r.error();
  const Config& c = **r;
  ASSERT_EQ(c.servers.size(), 2u);
  EXPECT_EQ(c.servers[0]->names[0].name, "a");  // glob results are sorted
  EXPECT_EQ(c.servers[1]->names[0].name, "b");
  EXPECT_EQ(c.servers[0]->file, dir.path() + "conf/conf.d/a.conf");
  ASSERT_EQ(c.servers[0]->settings.add_headers.size(), 1u);
  EXPECT_EQ(c.servers[0]->settings.add_headers[0].name, "X-Snippet");
  ASSERT_EQ(c.sources.size(), 4u);
  EXPECT_EQ(c.sources[0].first, main);
  EXPECT_EQ(c.sources[1].first, dir.path() + "conf/conf.d/a.conf");
  EXPECT_EQ(c.sources[2].first, dir.path() + "conf/snippets/h.conf");
  EXPECT_EQ(c.sources[3].first, dir.path() + "conf/conf.d/b.conf");
}

TEST(ConfigLoad, IncludeErrors) {
  TempDir dir;
  dir.write("bad.conf", "server {\n  listen 80;\n  bogus on;\n}\n");
  dir.write("loop.conf", "include loop.conf;\n");
  std::string m1 = dir.write("m1.conf", "http {\n include missing.conf;\n}\n");
  auto r1 = load(m1, dir.path(), "");
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.error(), m1 + ":2: open() \"" + dir.path() + "missing.conf\" failed (2: No such file or directory)");

  std::string m2 = dir.write("m2.conf", "http {\n include bad.conf;\n}\n");
  auto r2 = load(m2, dir.path(), "");
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error(), dir.path() + "bad.conf:3: unknown directive \"bogus\"");

  std::string m3 = dir.write("m3.conf", "include loop.conf;\n");
  auto r3 = load(m3, dir.path(), "");
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.error().find("too deep include nesting"), std::string::npos) << r3.error();

  std::string m4 = dir.write("m4.conf", "http {\n include a b;\n}\n");
  auto r4 = load(m4, dir.path(), "");
  ASSERT_FALSE(r4.ok());
  EXPECT_EQ(r4.error(), m4 + ":2: invalid number of arguments in \"include\" directive");
}

// ---- error messages --------------------------------------------------------------

TEST(ConfigLoad, ErrorMessages) {
  struct Case {
    const char* text;
    const char* want;
  } cases[] = {
      {"foo;", "string:1: unknown directive \"foo\""},
      {"http {\n worker_connections 1;\n}", "string:2: \"worker_connections\" directive is not allowed here"},
      {"worker_processes;", "string:1: invalid number of arguments in \"worker_processes\" directive"},
      {"worker_processes x;", "string:1: invalid value \"x\" in \"worker_processes\" directive"},
      {"pid a;\npid b;", "string:2: \"pid\" directive is duplicate"},
      {"http {}\nhttp {}", "string:2: \"http\" directive is duplicate"},
      {"http { sendfile maybe; }",
       "string:1: invalid value \"maybe\" in \"sendfile\" directive, it must be \"on\" or \"off\""},
      {"http { server {\nlisten 443 ssl; } }",
       "string:1: no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive"},
      {"http { server {\nhttp2_max_concurrent_streams 0; } }",
       "string:2: invalid value \"0\" in \"http2_max_concurrent_streams\" directive"},
      {"http { server {\nlisten 443 quic reuseport; } }",
       "string:1: no \"ssl_certificate\" is defined for the \"listen ... quic\" directive"},
      {"http { server {\nlisten 443 quic ssl; } }", "string:2: \"ssl\" parameter is incompatible with \"quic\""},
      {"http { server {\nlisten 80 rcvbuf=lots; } }",
       "string:2: invalid value \"rcvbuf=lots\" in \"listen\" directive"},
      {"http { server {\nlisten 443 quic proxy_protocol; } }",
       "string:2: \"proxy_protocol\" parameter is incompatible with \"quic\""},
      {"http { server {\nhttp2_recv_buffer_size 64k; } }", "string:2: \"http2_recv_buffer_size\" directive is not allowed here"},
      {"http { server {\nssl_ocsp on; } }", "string:2: \"ssl_ocsp on\" is not yet supported (ngx_http_ssl_module)"},
      {"http { server { location / {\nproxy_store on;\nproxy_store off; } } }", "string:3: \"proxy_store\" directive is duplicate"},
      {"http { server { location / {\nproxy_cache one; } } }", "string:2: \"proxy_cache\" zone \"one\" is unknown"},
      {"http {\nproxy_cache one; }", "string:2: \"proxy_cache\" zone \"one\" is unknown"},
      {"http {\nproxy_cache_path /tmp/c levels=3 keys_zone=one:1m; }", "string:2: invalid \"levels\" \"3\""},
      {"http {\nproxy_cache_path /tmp/c levels=1:2; }", "string:2: \"proxy_cache_path\" must have \"keys_zone\" parameter"},
      {"http { server { location / {\nproxy_cache_valid 200 abc; } } }", "string:2: invalid value \"abc\" in \"proxy_cache_valid\" directive"},
      {"http {\nupstream app { } }", "string:2: no servers are inside upstream"},
      {"http {\nupstream app { server 127.0.0.1:8080 weight=0; } }",
       "string:2: invalid value \"weight=0\" in \"server\" directive"},
      {"http { server { location ~ /x {\nproxy_pass http://127.0.0.1:1/u; } } }",
       "string:2: \"proxy_pass\" cannot have URI part in location given by regular expression, or inside named "
       "location, or inside \"if\" statement, or inside \"limit_except\" block"},
      {"http {\nclient_body_temp_path /t 1 9 1; }", "string:2: \"client_body_temp_path\" directive invalid value"},
      {"http {\nclient_body_temp_path /t 0; }", "string:2: \"client_body_temp_path\" directive invalid value"},
      {"http {\nclient_body_temp_path /t 1 2 2 1; }",
       "string:2: invalid number of arguments in \"client_body_temp_path\" directive"},
      {"http {\ngzip_comp_level 10; }", "string:2: value must be between 1 and 9"},
      {"http {\ngzip_proxied expired sometimes; }", "string:2: invalid value \"sometimes\" in \"gzip_proxied\" directive"},
      {"http {\ngzip_http_version 2.0; }", "string:2: invalid value \"2.0\" in \"gzip_http_version\" directive"},
      {"http {\nproxy_store_access user:x; }", "string:2: invalid value \"user:x\""},
      {"http { server {\nlisten unix:/tmp/s quic; } }",
       "string:2: \"quic\" parameter is incompatible with unix domain sockets"},
      {"http { server {\nlisten unix:; } }",
       "string:2: no path in the unix domain socket in \"unix:\" of the \"listen\" directive"},
      {"http { server {\nlisten 70000; } }", "string:2: invalid port in \"70000\" of the \"listen\" directive"},
      {"http { upstream u { server 127.0.0.1:1; } server { location / {\nproxy_pass http://u:9000; } } }",
       "string:2: upstream \"u\" may not have port 9000"},
      {"http { server {\nlisten 80 foo; } }", "string:2: invalid parameter \"foo\" in \"listen\" directive"},
      {"http { server {\nlisten [::1; } }", "string:2: invalid IPv6 address in \"[::1\" of the \"listen\" directive"},
      {"http {\nserver { listen 80 default_server; }\nserver { listen 80 default_server; } }",
       "string:3: a duplicate default server for 0.0.0.0:80 in string:2"},
      {"http {\nserver { listen 80; listen 80; } }", "string:2: a duplicate listen 0.0.0.0:80"},
      {"events {\nuse kqueue; }", "string:2: invalid value \"kqueue\" in \"use\" directive"},
      {"http {\naccess_log x nofmt; }", "string:2: unknown log format \"nofmt\""},
      {"http {\nlog_format combined x; }", "string:2: duplicate \"log_format\" name \"combined\""},
      {"http { server {\nalias /x; } }", "string:2: \"alias\" directive is not allowed here"},
      {"http { server { location / {\nroot /a;\nalias /b; } } }",
       "string:3: \"alias\" directive is duplicate, \"root\" directive was specified earlier"},
      {"http {\nadd_header X $foo; }", "string:2: unknown \"foo\" variable"},
      {"http { server {\nlocation /; } }", "string:2: directive \"location\" has no opening \"{\""},
      {"http { server {\nlisten 80 {} } }", "string:2: directive \"listen\" is not terminated by \";\""},
      {"http {\nexpires soon; }", "string:2: invalid value \"soon\" in \"expires\" directive"},
      {"http {\nerror_page 200 /x; }", "string:2: value \"200\" must be between 300 and 599"},
      {"http {\nerror_page 404 =x /x; }", "string:2: invalid value \"=x\" in \"error_page\" directive"},
      {"http { server {\nreturn abc; } }", "string:2: invalid return code \"abc\""},
      {"http {\nkeepalive_timeout 1 2 3; }",
       "string:2: invalid number of arguments in \"keepalive_timeout\" directive"},
      {"http { server { location / {\nlimit_except FOO { deny all; } } } }", "string:2: invalid method \"FOO\""},
      {"http { server { location / {\nlimit_except GET { root /x; } } } }",
       "string:2: \"root\" directive is not allowed here"},
      {"http {\nallow 1.2.3.4/33; }", "string:2: invalid value \"1.2.3.4/33\" in \"allow\" directive"},
      {"http {\nallow nothing; }", "string:2: invalid value \"nothing\" in \"allow\" directive"},
      {"http {\nclient_max_body_size 10q; }", "string:2: invalid value \"10q\" in \"client_max_body_size\" directive"},
      {"http {\nkeepalive_timeout 1x; }", "string:2: invalid value \"1x\" in \"keepalive_timeout\" directive"},
      {"http {\nopen_file_cache inactive=1s; }", "string:2: \"open_file_cache\" must have the \"max\" parameter"},
      {"http {\nadd_header X y sometimes; }", "string:2: invalid value \"sometimes\" in \"add_header\" directive"},
      {"http {\nerror_log /x loud; }", "string:2: invalid value \"loud\" in \"error_log\" directive"},
      {"http { server {\ninternal; } }", "string:2: \"internal\" directive is not allowed here"},
      {"http {\nroot /a;\nroot /b; }", "string:3: \"root\" directive is duplicate"},
      {"http {\ntypes { text/html; } }", "string:2: invalid number of arguments in \"text/html\" directive"},
      {"http {\nroot /srv/$nosuch; }", "string:2: unknown \"nosuch\" variable"},
  };
  for (const auto& c : cases) EXPECT_EQ(load_error(c.text), c.want) << c.text;
}

TEST(ConfigLoad, MissingDirectivesAreNamed) {
  // A real nginx directive names its module; a typo is unknown, not
  // "not yet supported"; a third-party module's directive names the module.
  EXPECT_EQ(load_error("http { server {\nssl_certficate /x; } }"), "string:2: unknown directive \"ssl_certficate\"");
  EXPECT_EQ(load_error("http { server { location / {\nproxy_pas http://a; } } }"),
            "string:2: unknown directive \"proxy_pas\"");
  EXPECT_EQ(load_error("http {\nxslt_stylesheet /x.xsl; }"),
            "string:2: \"xslt_stylesheet\" is not yet supported (ngx_http_xslt_module)");
  EXPECT_EQ(load_error("http {\nsubs_filter a b; }"),
            "string:2: \"subs_filter\" is a directive of ngx_http_substitutions_filter_module, which torii does not "
            "include");
  // geoip2 is built in: a missing file is the module's own error.
  EXPECT_EQ(load_error("http {\ngeoip2 /nonexistent/x.mmdb { } }"),
            "string:2: MMDB_open(\"/nonexistent/x.mmdb\") failed - Error opening the specified MaxMind DB file");
  EXPECT_EQ(load_error("http {\npagespeed on; }"),
            "string:2: \"pagespeed\" is a directive of ngx_pagespeed, which torii does not include");
  EXPECT_EQ(load_error("http {\njs_import main.js; }"),
            "string:2: \"js_import\" is a directive of njs (ngx_http_js_module), which torii does not include");
}

TEST(ConfigLoad, LuaBlocksAreSkippedAndNamed) {
  // Lua code is not nginx syntax: braces in strings, comments and long
  // brackets do not end the block, and the error names the directive.
  const char* conf =
      "http { server { location / {\n"
      "content_by_lua_block {\n"
      "  local t = { a = \"}\" } -- a } in a comment\n"
      "  local s = [[ } ]] --[==[ } ]==]\n"
      "  ngx.say('}', t.a)\n"
      "}\n"
      "} } }";
  EXPECT_EQ(load_error(conf),
            "string:2: \"content_by_lua_block\" is a directive of lua-nginx-module (OpenResty), which torii does "
            "not include");
  EXPECT_EQ(load_error("http {\ninit_by_lua_block { local x = { }\n"),
            "string:2: unexpected end of file in a Lua block, expecting \"}\"");
}

TEST(ConfigLoad, FirstErrorInFileOrder) {
  // Name, context and arity errors are found in file order, before any setter.
  EXPECT_EQ(load_error("http {\n server {\n  bogus;\n }\n sendfile maybe;\n}"),
            "string:3: unknown directive \"bogus\"");
}

// ---- inheritance -------------------------------------------------------------------

TEST(ConfigLoad, InheritanceRules) {
  auto cfg = load_ok(R"(
http {
  add_header A 1;
  allow 127.0.0.1;
  index a.html;
  error_page 404 /404.html;
  server {
    listen 8080;
    try_files $uri =404;
    location /inherit/ { }
    location /own/ {
      add_header B 2;
      deny all;
      index b.html;
      error_page 500 /500.html;
      return 403;
      location /own/nested/ { }
    }
    location /off/ { access_log off; }
    location /log/ { access_log /l/x.log; }
  }
  server {
    listen 8080;
    server_name other;
  }
  sendfile on;
  root www;
}
)");
  ASSERT_TRUE(cfg);
  const Server& s = *cfg->servers[0];
  const Location* inh = loc(s, "/inherit/x");
  ASSERT_NE(inh, nullptr);
  ASSERT_EQ(inh->settings.add_headers.size(), 1u);
  EXPECT_EQ(inh->settings.add_headers[0].name, "A");
  EXPECT_EQ(inh->settings.access_rules.size(), 1u);
  EXPECT_EQ(sources(inh->settings.index), std::vector<std::string>{"a.html"});
  EXPECT_EQ(inh->settings.error_pages.size(), 1u);
  EXPECT_TRUE(inh->settings.try_files.empty());  // try_files is not inherited
  EXPECT_EQ(s.settings.try_files.size(), 2u);
  // Directives after the server block still reach it.
  EXPECT_TRUE(inh->settings.sendfile);
  EXPECT_EQ(inh->settings.root, "/p/www");
  EXPECT_TRUE(cfg->servers[1]->settings.sendfile);

  const Location* own = loc(s, "/own/x");
  ASSERT_NE(own, nullptr);
  ASSERT_EQ(own->settings.add_headers.size(), 1u);
  EXPECT_EQ(own->settings.add_headers[0].name, "B");
  ASSERT_EQ(own->settings.access_rules.size(), 1u);
  EXPECT_TRUE(own->settings.access_rules[0].all);
  EXPECT_EQ(sources(own->settings.index), std::vector<std::string>{"b.html"});
  ASSERT_EQ(own->settings.error_pages.size(), 1u);
  EXPECT_EQ(own->settings.error_pages[0].codes[0], 500);
  ASSERT_TRUE(first_return(own->settings.rewrite));

  const Location* nested = loc(s, "/own/nested/x");
  ASSERT_NE(nested, nullptr);
  EXPECT_NE(nested, own);
  EXPECT_FALSE(first_return(nested->settings.rewrite));  // return is not inherited
  ASSERT_EQ(nested->settings.add_headers.size(), 1u);
  EXPECT_EQ(nested->settings.add_headers[0].name, "B");
  EXPECT_EQ(sources(nested->settings.index), std::vector<std::string>{"b.html"});

  const Location* off = loc(s, "/off/");
  EXPECT_TRUE(off->settings.access_log_off);
  EXPECT_TRUE(off->settings.access_logs.empty());
  const Location* log = loc(s, "/log/");
  ASSERT_EQ(log->settings.access_logs.size(), 1u);
  EXPECT_EQ(log->settings.access_logs[0].path, "/l/x.log");
  EXPECT_FALSE(log->settings.access_log_off);
  EXPECT_EQ(inh->settings.access_logs.size(), 1u);
  EXPECT_EQ(inh->settings.access_logs[0].path, "/p/logs/access.log");

  // Two servers on one port share a group; the first is the default.
  ASSERT_EQ(cfg->listen_groups.size(), 1u);
  EXPECT_EQ(cfg->listen_groups[0].servers.size(), 2u);
  EXPECT_EQ(cfg->listen_groups[0].default_server.get(), &s);
}

TEST(ConfigLoad, WildcardAndSpecificAddressAreSeparateGroups) {
  auto cfg = load_ok(R"(http {
    server { listen 80; server_name any; }
    server { listen 127.0.0.1:80; server_name local; }
    server { listen *:80; server_name star; }
    server { listen [::]:80; server_name v6; }
    server { listen 127.0.0.1; server_name local2; }
  })");
  ASSERT_TRUE(cfg);
  ASSERT_EQ(cfg->listen_groups.size(), 3u);
  EXPECT_EQ(cfg->listen_groups[0].listen.text, "0.0.0.0:80");
  EXPECT_EQ(cfg->listen_groups[0].servers.size(), 2u);
  EXPECT_EQ(cfg->listen_groups[1].listen.text, "127.0.0.1:80");
  EXPECT_EQ(cfg->listen_groups[1].servers.size(), 2u);
  EXPECT_EQ(cfg->listen_groups[2].listen.text, "[::]:80");
}

TEST(ConfigLoad, ListenHostName) {
  auto cfg = load_ok("http { server { listen localhost:8085; } }");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->servers[0]->listens[0].text, "127.0.0.1:8085");
  EXPECT_EQ(load_error("http { server {\nlisten no-such-host.invalid:80; } }"),
            "string:2: host not found in \"no-such-host.invalid:80\" of the \"listen\" directive");
}

TEST(ConfigLoad, LogFormatConcatenatesAndEscapes) {
  auto cfg = load_ok(R"(http {
    log_format a '$status' ' ' "$request_time";
    log_format b escape=none '$uri';
    log_format c escape=default x;
    access_log /a.log a;
  })");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->log_formats.at("a")->format.source, "$status $request_time");
  EXPECT_FALSE(cfg->log_formats.at("a")->json_escape);
  EXPECT_TRUE(cfg->log_formats.at("b")->escape_none);
  EXPECT_FALSE(cfg->log_formats.at("c")->escape_none);
  EXPECT_EQ(load_error("http {\nlog_format x escape=xml y; }"),
            "string:2: invalid value \"escape=xml\" in \"log_format\" directive");
}

TEST(ConfigLoad, TypesReplaceInheritedAndLowercase) {
  auto cfg = load_ok(R"(http {
    types { text/html html; }
    server { location /a/ { types { application/x-custom CuSt; } default_type x/y; } }
  })");
  ASSERT_TRUE(cfg);
  const Location* a = loc(*cfg->servers[0], "/a/");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(mime_type(a->settings, "/a/f.CUST"), "application/x-custom");
  EXPECT_EQ(mime_type(a->settings, "/a/f.html"), "x/y");
  EXPECT_EQ(mime_type(cfg->servers[0]->settings, "/f.html"), "text/html");
}

TEST(ConfigLoad, ShippedMimeTypesFileLoads) {
  const char* src = std::getenv("TORII_SOURCE_DIR");
  std::string path = std::string(src ? src : ".") + "/conf/mime.types";
  ASSERT_TRUE(std::filesystem::exists(path)) << "no " << path;
  path = std::filesystem::absolute(path).string();
  TempDir dir;
  std::string main = dir.write("t.conf", "http { include " + path + "; server {} }");
  auto r = load(main, dir.path(), "");
  ASSERT_TRUE(r.ok()) << r.error();
  const LocationSettings& s = (*r)->servers[0]->settings;
  EXPECT_EQ(mime_type(s, "/a.css"), "text/css");
  EXPECT_EQ(mime_type(s, "/a.js"), "text/javascript");
  EXPECT_EQ(mime_type(s, "/a.json"), "application/json");
  EXPECT_EQ(mime_type(s, "/a.woff2"), "font/woff2");
  EXPECT_EQ(mime_type(s, "/a.svg"), "image/svg+xml");
  EXPECT_EQ(mime_type(s, "/a.mp4"), "video/mp4");
}

}  // namespace
}  // namespace torii::config

namespace torii::config {
namespace {

// Each module's array directives keep their own "set in this block" bits:
// grpc_hide_header in a location must not make fastcgi_cache_bypass there
// add to the inherited list instead of replacing it (and the other way).
TEST(ConfigLoad, ArrayDirectivesOfDifferentModulesDoNotShareTheirFirstUse) {
  auto cfg = load_ok(R"(
    http {
      fastcgi_cache_path /tmp/fcgi-cache keys_zone=f:1m;
      fastcgi_cache_bypass $cookie_nocache;
      grpc_hide_header X-Outer;
      server {
        location /a {
          grpc_hide_header X-Inner;
          fastcgi_cache_bypass $arg_x;
        }
        location /b {
          fastcgi_cache_bypass $arg_y;
          grpc_hide_header X-Inner;
        }
      }
    })");
  ASSERT_TRUE(cfg);
  for (std::string_view path : {"/a", "/b"}) {
    const Location* l = loc(*cfg->servers[0], path);
    ASSERT_TRUE(l && l->settings.fastcgi && l->settings.fastcgi->upstream.cache) << path;
    EXPECT_EQ(l->settings.fastcgi->upstream.cache->bypass.size(), 1u) << path;
    ASSERT_TRUE(l->settings.grpc) << path;
    EXPECT_EQ(l->settings.grpc->upstream.hide_headers.size(), 1u) << path;
  }
}

}  // namespace
}  // namespace torii::config
