"""The command line: -t / -T config checks with FILE:LINE errors, -v / -V,
-s stop|quit|reload|reopen through the pid file, and -g."""

import os
import subprocess
import re
import signal

import pytest

import harness
from harness import base_conf, cli, http, wait_body, wait_until

SIMPLE = """
    server {
        listen 127.0.0.1:@PORT@;
        location / { return 200 "BODY"; }
    }
"""


def write_conf(server, text):
    """Renders `text` for `server` (without starting it); returns the path."""
    server.write_conf(text)
    return server.conf_path


def line_of(path, needle):
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in {path}")


def check(server, extra_g=None):
    return cli(["-t", "-c", str(server.conf_path)], prefix=server.prefix, extra_g=extra_g)


@pytest.fixture
def unstarted(make_server):
    """A server object whose config the test writes; ports are leased."""
    server = make_server(base_conf(SIMPLE), start=False)
    server.leases = [harness.PortLease()]
    server.ports = [server.leases[0].port]
    return server


# -- -t -----------------------------------------------------------------------


def test_t_ok(unstarted):
    write_conf(unstarted, base_conf(SIMPLE))
    p = check(unstarted)
    assert p.returncode == 0, p.stderr
    assert "syntax is ok" in p.stderr
    assert "test is successful" in p.stderr
    assert str(unstarted.conf_path) in p.stderr
    # -t does not start anything.
    assert not harness.connectable(unstarted.port)


def assert_error_at(p, path, line, *words):
    """Exit code 1 and a message naming FILE:LINE and the given words (the
    directive); the wording around them is free."""
    out = p.stderr + p.stdout
    assert p.returncode == 1, out
    assert f"{path}:{line}" in out, out
    # The temporary path holds the test's name: look for words outside it.
    message = out.replace(str(path), "")
    for w in words:
        assert w in message, out
    assert "test is successful" not in out


def test_t_unknown_directive(unstarted):
    conf = write_conf(unstarted, base_conf(SIMPLE.replace("listen", "bogus_directive on;\n        listen")))
    p = check(unstarted)
    assert_error_at(p, conf, line_of(conf, "bogus_directive"), "bogus_directive")


def test_t_directive_in_wrong_block(unstarted):
    conf = write_conf(unstarted, base_conf(SIMPLE, main="listen 127.0.0.1:1;"))
    p = check(unstarted)
    assert_error_at(p, conf, line_of(conf, "listen 127.0.0.1:1;"), "listen")


def test_t_location_outside_server(unstarted):
    conf = write_conf(unstarted, base_conf(SIMPLE + "\n    location /x { }\n"))
    p = check(unstarted)
    assert_error_at(p, conf, line_of(conf, "location /x"), "location")


def test_t_bad_value(unstarted):
    conf = write_conf(unstarted, base_conf(SIMPLE + "\n    client_max_body_size 12q;\n"))
    p = check(unstarted)
    assert_error_at(p, conf, line_of(conf, "client_max_body_size"), "client_max_body_size")


def test_t_bad_argument_count(unstarted):
    conf = write_conf(unstarted, base_conf(SIMPLE + "\n    keepalive_requests 1 2 3;\n"))
    p = check(unstarted)
    assert_error_at(p, conf, line_of(conf, "keepalive_requests"), "keepalive_requests")


def test_t_missing_semicolon(unstarted):
    text = base_conf(SIMPLE + "\n    keepalive_timeout 5\n}\n").rstrip()
    # Drop the http block's own closing brace so that the one after the
    # unterminated directive closes it.
    text = text[:text.rindex("}")]
    conf = write_conf(unstarted, text)
    p = check(unstarted)
    out = p.stderr + p.stdout
    assert p.returncode == 1, out
    directive_line = line_of(conf, "keepalive_timeout 5")
    m = re.search(re.escape(str(conf)) + r":(\d+)", out)
    assert m, out
    # Reported at the directive or where its missing ";" was noticed.
    assert int(m.group(1)) in (directive_line, directive_line + 1), out


def test_t_warns_of_a_server_name_with_a_slash(unstarted):
    # DokuWiki's recipe misses the ";" after server_name, so the root's path
    # becomes a name: accepted, with nginx's warning.
    conf = write_conf(unstarted, base_conf("""
    server {
        listen 127.0.0.1:@PORT@;
        server_name wiki.test
        root /srv/wiki;
    }
"""))
    p = check(unstarted)
    out = p.stderr + p.stdout
    assert p.returncode == 0, out
    assert re.search(r'\[warn\].*server name "/srv/wiki" has suspicious symbols', out), out


def test_t_refuses_a_buffered_log_with_variables_in_its_path(unstarted):
    conf = write_conf(unstarted, base_conf("""
    server {
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/$host.log combined buffer=32k;
    }
"""))
    p = check(unstarted)
    assert_error_at(p, conf, line_of(conf, "buffer=32k"), "buffered logs cannot have variables in name")


def test_t_error_in_included_file(unstarted):
    inc = unstarted.prefix / "conf.d" / "broken.conf"
    inc.parent.mkdir(exist_ok=True)
    inc.write_text("# first line\n\nnot_a_directive 1;\n")
    write_conf(unstarted, base_conf(SIMPLE + f"\n    include {inc.parent}/*.conf;\n"))
    p = check(unstarted)
    assert_error_at(p, inc, 3, "not_a_directive")


def test_t_include_of_dev_null(unstarted):
    # `include /dev/null;`: an include switched off, read as an empty file.
    write_conf(unstarted, base_conf(SIMPLE + "\n    include /dev/null;\n"))
    p = check(unstarted)
    assert p.returncode == 0, p.stderr


def test_t_missing_file(unstarted):
    p = cli(["-t", "-c", str(unstarted.prefix / "nope.conf")], prefix=unstarted.prefix)
    out = p.stderr + p.stdout
    assert p.returncode == 1, out
    assert "nope.conf" in out


def test_t_prints_config_dump(unstarted):
    inc = unstarted.prefix / "conf.d" / "extra.conf"
    inc.parent.mkdir(exist_ok=True)
    inc.write_text("# marker-included-7f3a\nserver_tokens off;\n")
    conf = write_conf(unstarted, base_conf(SIMPLE + f"\n    # marker-main-91bc\n    include {inc};\n"))
    p = cli(["-T", "-c", str(conf)], prefix=unstarted.prefix)
    assert p.returncode == 0, p.stderr
    assert "test is successful" in p.stderr
    out = p.stdout
    assert f"# configuration file {conf}:" in out
    assert f"# configuration file {inc}:" in out
    assert "marker-main-91bc" in out and "marker-included-7f3a" in out
    assert out.index(str(conf)) < out.index("marker-main-91bc")
    assert out.index(f"# configuration file {inc}:") < out.index("marker-included-7f3a")


def test_t_dumps_a_file_included_twice_once(unstarted):
    inc = unstarted.prefix / "conf.d" / "headers.conf"
    inc.parent.mkdir(exist_ok=True)
    inc.write_text("add_header X-Twice yes;\n")
    conf = write_conf(unstarted, base_conf(f"""
    server {{ listen 127.0.0.1:1; include {inc}; }}
    server {{ listen 127.0.0.1:2; include {inc}; }}
"""))
    p = cli(["-T", "-c", str(conf)], prefix=unstarted.prefix)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(f"# configuration file {inc}:") == 1, p.stdout


def test_t_with_g(unstarted):
    write_conf(unstarted, base_conf(SIMPLE))
    p = check(unstarted, extra_g="worker_processes 2;")
    assert p.returncode == 0, p.stderr
    p = check(unstarted, extra_g="no_such_thing 2;")
    assert p.returncode == 1
    assert "no_such_thing" in p.stderr


# -- -v / -V --------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["-v", "-V"])
def test_version(flag):
    p = cli([flag])
    assert p.returncode == 0
    if harness.IS_NGINX:
        assert re.search(r"nginx/\d+\.\d+\.\d+", p.stderr)
    else:
        assert "torii/0.1.0" in p.stderr


# -- -s ---------------------------------------------------------------------------


def running(make_server, text=SIMPLE, **kwargs):
    server = make_server(base_conf(text), **kwargs)
    wait_until(lambda: server.pid_file.exists() and server.pid_file.read_text().strip(),
               10, what="the pid file")
    assert int(server.pid_file.read_text().strip()) == server.proc.pid
    return server


def signal_cmd(server, action):
    return cli(["-c", str(server.conf_path), "-s", action], prefix=server.prefix)


@pytest.mark.parametrize("action", ["stop", "quit"])
def test_s_stop_and_quit(make_server, action):
    server = running(make_server)
    assert http(server.port, "/").body == b"BODY"
    p = signal_cmd(server, action)
    assert p.returncode == 0, p.stderr
    assert server.wait_exit(10) is not None, "did not exit after -s " + action
    assert not server.pid_file.exists(), "pid file left behind"


def test_s_reload(make_server):
    server = running(make_server)
    assert http(server.port, "/").body == b"BODY"
    server.write_conf(base_conf(SIMPLE.replace('"BODY"', '"NEW!"')))
    p = signal_cmd(server, "reload")
    assert p.returncode == 0, p.stderr
    wait_body(server.port, "/", "NEW!")
    assert server.alive()


def test_s_reopen(make_server):
    server = running(make_server)
    http(server.port, "/?one")
    wait_until(lambda: server.access_log.exists() and "?one" in server.access_log.read_text(), 10)
    server.access_log.rename(server.prefix / "logs" / "old.log")
    p = signal_cmd(server, "reopen")
    assert p.returncode == 0, p.stderr
    wait_until(server.access_log.exists, 10, what="the reopened access log")


def test_s_without_running_instance(unstarted):
    write_conf(unstarted, base_conf(SIMPLE))
    p = cli(["-c", str(unstarted.conf_path), "-s", "stop"], prefix=unstarted.prefix)
    assert p.returncode != 0
    assert "server.pid" in p.stderr


def test_s_unknown_signal(unstarted):
    write_conf(unstarted, base_conf(SIMPLE))
    p = cli(["-c", str(unstarted.conf_path), "-s", "explode"], prefix=unstarted.prefix)
    assert p.returncode != 0
    assert "explode" in p.stderr


# -- -g -------------------------------------------------------------------------------


def test_g_sets_main_directive(make_server):
    text = base_conf(SIMPLE).replace("pid @PREFIX@/logs/server.pid;", "")
    server = make_server(text, start=False)
    alt = server.prefix / "logs" / "alt.pid"
    server.extra_g = f"pid {alt};"
    server.start()
    wait_until(alt.exists, 10, what="the pid file named by -g")
    assert int(alt.read_text().strip()) == server.proc.pid
    assert http(server.port, "/").body == b"BODY"


def test_g_duplicate_of_file_directive_is_error(unstarted):
    write_conf(unstarted, base_conf(SIMPLE))
    p = check(unstarted, extra_g=f"pid {unstarted.prefix}/other.pid;")
    assert p.returncode == 1
    assert "pid" in p.stderr and "duplicate" in p.stderr


def test_foreground_signal_stop(make_server):
    server = running(make_server)
    server.signal(signal.SIGINT)
    assert server.wait_exit(10) is not None
    assert not os.path.exists(server.pid_file)


def test_relative_c_is_under_the_prefix_and_e_names_the_error_log(tmp_path):
    # nginx's rules: `-c conf/x.conf` is read from the prefix, wherever the
    # command runs; `-e FILE` is the main error log where the file sets none.
    (tmp_path / "conf").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "conf" / "x.conf").write_text("events {}\nhttp {\n server { listen 127.0.0.1:1; }\n}\n")
    r = subprocess.run([harness.BIN, "-p", f"{tmp_path}/", "-c", "conf/x.conf", "-e", f"{tmp_path}/logs/startup.log",
                        "-t"], capture_output=True, text=True, timeout=60, cwd="/")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "logs" / "startup.log").exists()
    assert not (tmp_path / "logs" / "error.log").exists()
