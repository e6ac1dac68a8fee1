"""Directives torii does not implement yet load when they are set to
nginx's default value (`ssl_ocsp off;`, `proxy_cache off;`: what
many configs spell out), and are refused with "not yet supported" for any
other value. Checked with `-t`, as a user would; the all-defaults config is
valid for nginx 1.22 too."""

import pytest

import harness
from harness import base_conf, cli

MAIN = """
worker_priority 0;
pcre_jit off;
lock_file logs/nginx.lock;
"""

EVENTS = """
    accept_mutex off;
    accept_mutex_delay 500ms;
"""

HTTP = """
    server_names_hash_max_size 1024;
    server_names_hash_bucket_size 128;
    variables_hash_max_size 2048;
    variables_hash_bucket_size 64;
    limit_rate 0;
    limit_rate_after 0k;
    resolver_timeout 30s;
    satisfy all;
    aio off;
    directio off;
    output_buffers 2 32k;
    reset_timedout_connection off;
    lingering_close on;
    lingering_time 30s;
    lingering_timeout 5000ms;
    absolute_redirect on;
    port_in_redirect on;
    server_name_in_redirect off;
    chunked_transfer_encoding on;
    postpone_output 1460;
    keepalive_time 1h;
    send_lowat 0;
    sendfile_max_chunk 2048k;
    client_body_in_file_only off;
    recursive_error_pages off;
    msie_padding on;
    msie_refresh off;
    open_log_file_cache off;
    log_subrequest off;
    disable_symlinks off;
    if_modified_since exact;
    read_ahead 0;
    real_ip_header X-Real-IP;
    real_ip_recursive off;
    charset off;
    autoindex off;
    ssi off;
    auth_basic off;
    auth_request off;
    gzip_static off;
    gzip_comp_level 1;
    gzip_min_length 20;
    gzip_proxied off;
    gzip_http_version 1.1;
    gzip_types text/html;
    gzip_buffers 32 4k;
    limit_req_status 503;
    limit_req_log_level error;
    limit_req_dry_run off;
    limit_conn_status 503;
    limit_conn_log_level error;
    limit_conn_dry_run off;
    userid off;
    sub_filter_once on;
    sub_filter_last_modified off;
    sub_filter_types text/html;
    slice 0;
    dav_access user:rw;
    ssl_stapling off;
    ssl_stapling_verify off;
    ssl_verify_client off;
    ssl_verify_depth 1;
    ssl_ocsp off;
    ssl_ocsp_cache off;
    ssl_reject_handshake off;
    proxy_cache off;
    proxy_cache_methods GET HEAD;
    proxy_cache_min_uses 1;
    proxy_cache_lock off;
    proxy_cache_lock_timeout 5s;
    proxy_cache_lock_age 5s;
    proxy_cache_revalidate off;
    proxy_cache_background_update off;
    proxy_cache_convert_head on;
    proxy_cache_use_stale off;
    proxy_store off;
    proxy_store_access user:rw;
    proxy_limit_rate 0;
    proxy_cookie_domain off;
    proxy_cookie_path off;
    proxy_cookie_flags off;
    proxy_socket_keepalive off;
    proxy_force_ranges off;
    proxy_headers_hash_max_size 512;
    proxy_headers_hash_bucket_size 64;
    proxy_ssl_verify off;
    proxy_ssl_verify_depth 1;
    proxy_ssl_server_name off;
    proxy_ssl_session_reuse on;
    upstream backend {
        server 127.0.0.1:9;
        keepalive 4;
        keepalive_time 1h;
    }
    server {
        listen 127.0.0.1:@PORT@ so_keepalive=off;
        ssl_stapling off;
        ssl_verify_client off;
        location / {
            limit_rate 0;
            proxy_cache off;
            proxy_pass http://backend;
        }
    }
"""


def check(server):
    return cli(["-t", "-c", str(server.conf_path)], prefix=server.prefix)


@pytest.fixture
def unstarted(make_server):
    server = make_server(base_conf(""), start=False)
    server.leases = [harness.PortLease()]
    server.ports = [server.leases[0].port]
    return server


def test_defaults_spelled_out_load(unstarted):
    unstarted.write_conf(base_conf(HTTP, main=MAIN, events=EVENTS))
    p = check(unstarted)
    assert p.returncode == 0, p.stderr
    assert "test is successful" in p.stderr


def test_the_defaults_start_and_serve(make_server):
    srv = make_server(base_conf(HTTP.replace("proxy_pass http://backend;", "return 200 \"up\\n\";"),
                                main=MAIN, events=EVENTS))
    r = harness.http(srv.port, "/")
    assert r.status == 200 and r.body == b"up\n"


@pytest.mark.parametrize("block,line", [
    ("http", "ssl_ocsp on;"),
])
def test_other_values_are_refused_as_not_yet_supported(unstarted, nginx_only_skip, block, line):
    http = "    " + line + "\n" + HTTP if block == "http" else HTTP
    if block == "server":
        http = HTTP.replace("ssl_verify_client off;", line)
    if block == "upstream":
        http = HTTP.replace("keepalive 4;\n        keepalive_time 1h;", "keepalive 4;\n        " + line)
    unstarted.write_conf(base_conf(http, main=MAIN, events=EVENTS))
    p = check(unstarted)
    out = p.stderr + p.stdout
    assert p.returncode == 1, out
    assert "not yet supported" in out, out
    assert line.split()[0] in out
    lineno = next(n for n, text in enumerate(unstarted.conf_path.read_text().splitlines(), 1) if line in text)
    assert f"{unstarted.conf_path}:{lineno}" in out, out


def test_bad_hash_size_is_invalid(unstarted, nginx_only_skip):
    unstarted.write_conf(base_conf("server_names_hash_bucket_size lots;\n" + HTTP, main=MAIN, events=EVENTS))
    p = check(unstarted)
    assert p.returncode == 1
    assert "invalid value" in p.stderr + p.stdout
