"""error_log in http, server and location blocks: a request's messages go
to the log of its location (else its server's, else the http block's),
at that log's own level, and only the process's own messages to the main
log; every such file exists once the server has started. nginx's per-site
error logs. Runs against nginx too."""

from harness import base_conf, http, wait_until


def test_request_lines_go_to_their_blocks_log(make_server):
    srv = make_server(base_conf("""
    error_log @PREFIX@/logs/http-error.log info;
    root @PREFIX@/html;
    server {
        listen 127.0.0.1:@PORT@;
        location /loc { error_log @PREFIX@/logs/loc-error.log info; }
    }
    server {
        listen 127.0.0.1:@PORT1@;
        error_log @PREFIX@/logs/srv-error.log error;
        location /quiet { error_log @PREFIX@/logs/quiet-error.log crit; }
    }
    """), nports=2)
    logs = srv.prefix / "logs"
    for name in ("http", "loc", "srv", "quiet"):
        assert (logs / f"{name}-error.log").exists(), name
    assert http(srv.ports[0], "/loc/missing-a").status == 404
    assert http(srv.ports[0], "/other/missing-b").status == 404
    assert http(srv.ports[1], "/srv/missing-c").status == 404
    assert http(srv.ports[1], "/quiet/missing-d").status == 404

    def lines(name):
        return (logs / f"{name}-error.log").read_text()
    wait_until(lambda: "missing-a" in lines("loc"), 10, what="the location's log line")
    wait_until(lambda: "missing-b" in lines("http"), 10, what="the http block's log line")
    wait_until(lambda: "missing-c" in lines("srv"), 10, what="the server's log line")
    assert "missing-a" not in lines("http") and "missing-b" not in lines("loc")
    # crit: a 404's error line is below the location's level.
    assert "missing-d" not in lines("quiet") and "missing-d" not in lines("srv")
    main = srv.error_log_text()
    assert not any(m in main for m in ("missing-a", "missing-b", "missing-c", "missing-d"))


def test_a_log_that_cannot_be_opened_fails_the_check(tmp_path):
    import harness
    (tmp_path / "logs").mkdir()
    conf = tmp_path / "t.conf"
    conf.write_text("events {}\nhttp {\n server { listen 127.0.0.1:1;\n"
                    f" error_log {tmp_path}/no/such/dir/site.log; }}\n}}\n")
    r = harness.cli(["-t", "-c", str(conf)], prefix=tmp_path)
    assert r.returncode != 0
    assert f'open() "{tmp_path}/no/such/dir/site.log" failed (2: No such file or directory)' in r.stderr, r.stderr


def test_several_logs_in_one_block_each_at_its_level(make_server):
    """Two or more error_log lines in a block: a request's line goes to each
    log whose level it reaches (once to a file named twice at two levels is
    twice, as nginx writes it once per line)."""
    srv = make_server(base_conf("""
    root @PREFIX@/html;
    server {
        listen 127.0.0.1:@PORT@;
        location /both {
            error_log @PREFIX@/logs/both-info.log info;
            error_log @PREFIX@/logs/both-error.log error;
            error_log @PREFIX@/logs/both-crit.log crit;
        }
        location /twice {
            error_log @PREFIX@/logs/twice.log;
            error_log @PREFIX@/logs/twice.log warn;
        }
    }
    """))
    logs = srv.prefix / "logs"
    assert http(srv.port, "/both/missing-a").status == 404
    assert http(srv.port, "/twice/missing-b").status == 404

    def count(name, what):
        return sum(what in line for line in (logs / name).read_text().splitlines())
    wait_until(lambda: count("both-info.log", "missing-a") == 1 and count("both-error.log", "missing-a") == 1,
               10, what="the line in the info and error logs")
    wait_until(lambda: count("twice.log", "missing-b") == 2, 10, what="the line twice in the twice-named log")
    assert count("both-crit.log", "missing-a") == 0
    assert "missing-a" not in srv.error_log_text()


def test_limit_lines_go_to_the_requests_log(make_server):
    """limit_req's and limit_conn's lines are the request's: they go to its
    location's error_log at limit_*_log_level, not to the main log."""
    srv = make_server(base_conf("""
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
    root @PREFIX@/html;
    server {
        listen 127.0.0.1:@PORT@;
        location /limited {
            limit_req zone=one;
            limit_req_log_level info;
            error_log @PREFIX@/logs/limited.log info;
        }
    }
    """))
    assert http(srv.port, "/limited").status == 404  # `return` would answer before the limit
    assert http(srv.port, "/limited").status == 503
    log = srv.prefix / "logs" / "limited.log"
    wait_until(lambda: 'limiting requests, excess: 1.000 by zone "one"' in log.read_text(), 10,
               what="the location's log line")
    assert "limiting requests" not in srv.error_log_text()


def test_several_main_logs(make_server):
    """Two error_log lines in the main context (as configs pair a file with
    syslog): each gets the lines that reach its level. The harness's own
    line logs at notice; this one adds a file at error."""
    srv = make_server(base_conf("""
    root @PREFIX@/html;
    server {
        listen 127.0.0.1:@PORT@;
    }
    """, main="error_log @PREFIX@/logs/main-error.log error;\n"))
    assert http(srv.port, "/missing-m").status == 404
    second = srv.prefix / "logs" / "main-error.log"
    wait_until(lambda: "missing-m" in srv.error_log_text() and "missing-m" in second.read_text(), 10,
               what="the line in both main logs")
    assert "[notice]" not in second.read_text()  # below its level
