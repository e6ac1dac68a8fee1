"""limit_conn: requests in progress per key, with parallel slow clients
(python sockets, responses paced by limit_rate so they stay in progress).
The count is per request and given back when the request ends; the same
expectations hold against nginx (TORII_BIN=/usr/sbin/nginx)."""

import re
import socket

import harness
from harness import http

CONF = r"""
    limit_conn_zone $binary_remote_addr zone=addr:1m;
    limit_conn_zone $arg_k zone=bykey:1m;
    limit_conn_zone $binary_remote_addr zone=dryzone:1m;
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        add_header X-Conn $limit_conn_status always;

        location /slow/ { limit_conn addr 2; limit_rate 1k; }
        location /keyed/ { limit_conn bykey 1; limit_rate 1k; }
        location /teapot/ { limit_conn addr 1; limit_conn_status 429; limit_conn_log_level info; limit_rate 1k; }
        location /dry/ { limit_conn dryzone 1; limit_conn_dry_run on; limit_rate 1k; }
        location /fast/ { limit_conn addr 1; }
    }
"""

BIG = b"x" * 200_000


def make(make_server):
    srv = make_server(harness.base_conf(CONF, error_level="info"), start=False)
    for d in ("slow", "keyed", "teapot", "dry", "fast"):
        (srv.prefix / "www" / d).mkdir(parents=True, exist_ok=True)
        (srv.prefix / "www" / d / "big").write_bytes(BIG)
    srv.start()
    return srv


def start_slow(port, path):
    """A client whose response is in progress: it read the head only."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        assert chunk, head
        head += chunk
    status = int(head.split(b" ")[1])
    return s, status, head


def test_third_parallel_request_is_refused_until_one_ends(make_server):
    srv = make(make_server)
    a, sa, _ = start_slow(srv.port, "/slow/big")
    b, sb, _ = start_slow(srv.port, "/slow/big")
    assert (sa, sb) == (200, 200)
    r = http(srv.port, "/slow/big")
    assert r.status == 503, r
    assert r.header("X-Conn") == "REJECTED"
    assert re.search(r'\[error\] .*limiting connections by zone "addr", client: 127\.0\.0\.1', srv.error_log_text())
    a.close()
    # The count comes back once the server sees the client gone.
    def third_starts():
        s, st, _ = start_slow(srv.port, "/slow/big")
        s.close()
        return st == 200
    harness.wait_until(third_starts, 10, what="a freed slot")
    b.close()


def test_each_key_counts_apart(make_server):
    srv = make(make_server)
    a, sa, _ = start_slow(srv.port, "/keyed/big?k=a")
    b, sb, _ = start_slow(srv.port, "/keyed/big?k=b")
    c, sc, _ = start_slow(srv.port, "/keyed/big?k=a")
    assert (sa, sb, sc) == (200, 200, 503)
    for s in (a, b, c):
        s.close()


def test_status_log_level_and_dry_run(make_server):
    srv = make(make_server)
    a, sa, head = start_slow(srv.port, "/teapot/big")
    assert sa == 200 and b"X-Conn: PASSED" in head
    r = http(srv.port, "/teapot/big")
    assert r.status == 429
    assert re.search(r'\[info\] .*limiting connections by zone "addr"', srv.error_log_text())
    a.close()

    d, sd, _ = start_slow(srv.port, "/dry/big")
    e, se, head = start_slow(srv.port, "/dry/big")
    assert (sd, se) == (200, 200)
    assert b"X-Conn: REJECTED_DRY_RUN" in head
    assert "limiting connections, dry run, by zone" in srv.error_log_text()
    d.close()
    e.close()


def test_sequential_requests_on_one_connection_never_count_twice(make_server):
    srv = make(make_server)
    with harness.Conn(srv.port) as c:
        for _ in range(5):
            r = c.request("GET", "/fast/big")
            assert r.status == 200 and len(r.body) == len(BIG)


H2_CONF = r"""
    limit_conn_zone $binary_remote_addr zone=addr:1m;
    server {
        listen 127.0.0.1:@PORT@ http2;
        server_name localhost;
        root @PREFIX@/www;
        location /slow/ { limit_conn addr 1; limit_rate 1k; }
    }
"""


def test_http2_streams_count_one_by_one(make_server):
    """nginx counts requests, not connections: a second stream on the same
    HTTP/2 connection is refused while the first is in progress."""
    import h2.config
    import h2.connection
    import h2.events

    srv = make_server(harness.base_conf(H2_CONF), start=False)
    (srv.prefix / "www" / "slow").mkdir(parents=True)
    (srv.prefix / "www" / "slow" / "big").write_bytes(BIG)
    srv.start()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    headers = [(":method", "GET"), (":path", "/slow/big"), (":scheme", "http"), (":authority", "localhost")]
    conn.send_headers(1, headers, end_stream=True)
    s.sendall(conn.data_to_send())
    statuses = {}
    while 1 not in statuses:
        for ev in conn.receive_data(s.recv(65536)):
            if isinstance(ev, h2.events.ResponseReceived):
                statuses[ev.stream_id] = dict(ev.headers)[b":status"]
        s.sendall(conn.data_to_send())
    conn.send_headers(3, headers, end_stream=True)
    s.sendall(conn.data_to_send())
    while 3 not in statuses:
        for ev in conn.receive_data(s.recv(65536)):
            if isinstance(ev, h2.events.ResponseReceived):
                statuses[ev.stream_id] = dict(ev.headers)[b":status"]
        s.sendall(conn.data_to_send())
    assert statuses == {1: b"200", 3: b"503"}, statuses
    s.close()
