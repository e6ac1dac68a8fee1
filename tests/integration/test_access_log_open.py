"""Every access_log file is opened (created) when the config is loaded, as
nginx opens its files at start, -t and reload: it exists before any
request, and a path that cannot be opened stops the start (or the reload,
which keeps the running config) with nginx's open() "PATH" failed line.
Runs against nginx too (TORII_BIN=/usr/sbin/nginx)."""

import subprocess

import harness
from harness import base_conf, cli, http, wait_until

LOGS = ("http.log", "server.log", "location.log", "if.log", "quiet.log")


def conf(extra=""):
    return base_conf(access_log=False, http=f"""
    access_log @PREFIX@/logs/http.log;
    server {{
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/server.log;
        location / {{ return 200 "ok\\n"; }}
        location /loc/ {{
            access_log @PREFIX@/logs/location.log combined;
            if ($arg_x) {{ access_log @PREFIX@/logs/if.log; }}
            return 200 "loc\\n";
        }}
        {extra}
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name never.example;
        location / {{ access_log @PREFIX@/logs/quiet.log; return 204; }}
    }}""")


def test_every_file_exists_before_any_request(make_server):
    s = make_server(conf())
    for name in LOGS:
        assert (s.prefix / "logs" / name).exists(), name
    # Created, not written: no request came.
    assert (s.prefix / "logs" / "server.log").read_bytes() == b""
    assert http(s.port, "/").status == 200


def test_t_creates_them_too(make_server):
    s = make_server(conf(), start=False)
    s.leases = [harness.PortLease()]
    s.ports = [s.leases[0].port]
    s.write_conf()
    p = cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    assert p.returncode == 0, p.stderr
    for name in LOGS:
        assert (s.prefix / "logs" / name).exists(), name


def test_a_file_that_cannot_be_opened_stops_the_start(make_server):
    s = make_server(conf("location /bad/ { access_log @PREFIX@/missing/dir/bad.log; }"), start=False)
    s.leases = [harness.PortLease()]
    s.ports = [s.leases[0].port]
    s.write_conf()
    p = subprocess.run(s.command(), capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                       cwd=s.prefix)
    assert p.returncode != 0
    out = p.stdout + p.stderr
    assert f'open() "{s.prefix}/missing/dir/bad.log" failed (2: No such file or directory)' in out, out
    assert not harness.connectable(s.port)


def test_reload_opens_new_files_and_a_bad_one_fails_the_reload(make_server):
    s = make_server(conf())
    new_log = s.prefix / "logs" / "new.log"
    s.reload(conf("location /new/ { access_log @PREFIX@/logs/new.log; return 200; }"))
    wait_until(new_log.exists, 15, what="the new access log file")

    s.reload(conf("location /bad/ { access_log @PREFIX@/missing/dir/bad.log; return 200; }"))
    line = f'open() "{s.prefix}/missing/dir/bad.log" failed (2: No such file or directory)'
    wait_until(lambda: line in s.error_log_text() or line in s.output(), 15, what="the failed reload's line")
    assert s.alive()
    assert http(s.port, "/").status == 200
    assert not (s.prefix / "missing").exists()
