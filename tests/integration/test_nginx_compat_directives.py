"""Directives configs copied from nginx carry that ask torii for nothing
(open_log_file_cache) or for what it cannot do (load_module), and env.
The expectations hold for nginx too (TORII_BIN=/usr/sbin/nginx), except
the test that reads torii's own warning."""

import os

import pytest

import harness


def config_check(make_server, http, main=""):
    """`-t` on a config with `http` in its http block: (ok, output)."""
    s = make_server(harness.base_conf(http=http, main=main), start=False)
    s.ports = [0]
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------------------
# open_log_file_cache, load_module, env


def test_open_log_file_cache_syntax(make_server):
    ok, out = config_check(make_server, "open_log_file_cache max=1000 inactive=20s valid=1m min_uses=2;")
    assert ok, out
    ok, out = config_check(make_server, "server { open_log_file_cache off; }")
    assert ok, out
    ok, out = config_check(make_server, "open_log_file_cache inactive=20s;")
    assert not ok and '"open_log_file_cache" must have "max" parameter' in out
    ok, out = config_check(make_server, "open_log_file_cache max=many;")
    assert not ok and 'invalid "open_log_file_cache" parameter "max=many"' in out


@pytest.mark.skipif(not os.path.exists("/usr/lib/nginx/modules/ngx_http_echo_module.so"),
                    reason="needs Debian's libnginx-mod-http-echo")
def test_load_module_is_accepted(make_server, nginx_only_skip):
    # torii only: nginx loads the module, torii says it cannot.
    ok, out = config_check(make_server, "", main="load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;")
    assert ok, out
    assert "ngx_http_echo_module.so" in out and "load_module" in out
    # The module's own directives are still refused, by name.
    ok, out = config_check(make_server, "server { location / { echo hi; } }",
                           main="load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;")
    assert not ok and '"echo"' in out


@pytest.mark.skipif(not os.path.exists("/usr/lib/nginx/modules/ngx_http_headers_more_filter_module.so"),
                    reason="needs Debian's libnginx-mod-http-headers-more-filter")
def test_load_module_of_a_built_in_module_is_quiet(make_server):
    # headers-more is built in: its load_module line loads without a word
    # (nginx loads the module), and its directives work.
    ok, out = config_check(make_server, "server { location / { more_clear_headers Server; } }",
                           main="load_module /usr/lib/nginx/modules/ngx_http_headers_more_filter_module.so;")
    assert ok, out
    assert 'ignored' not in out and 'warn' not in out


def test_env_is_accepted(make_server):
    # Nothing a response shows reads the environment (nginx's workers keep
    # their time zone, too): the lines must load.
    ok, out = config_check(make_server, "", main="env TZ; env TORII_TEST_VAR=1; env PATH;")
    assert ok, out
