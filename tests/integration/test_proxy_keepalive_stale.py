"""Kept-alive upstream connections that the upstream closes: a request that
meets one (the close crossed it, before any byte of an answer) goes again
on another connection, as nginx does with a cached connection, unless it
may not be sent twice (a POST)."""

from concurrent.futures import ThreadPoolExecutor

import harness
from bad_upstream import ClosingUpstream


def proxy_server(make_server, up, extra=""):
    return make_server(harness.base_conf(http=f"""
    upstream app {{ server 127.0.0.1:{up.port}; keepalive 16; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            {extra}
        }}
    }}""", error_level="info"))


def test_request_goes_again_when_the_kept_connection_closes_under_it(make_server):
    up = ClosingUpstream(close_on=2)
    try:
        srv = proxy_server(make_server, up)
        first = harness.http(srv.port, "/first")
        assert (first.status, first.body) == (200, b"/first")
        # The kept connection takes the second request and closes without an
        # answer: the one server is asked again, on a new connection.
        again = harness.http(srv.port, "/again")
        assert (again.status, again.body) == (200, b"/again")
        assert [line.split(" ")[1] for line in up.seen] == ["/first", "/again", "/again"]
        assert up.connections == 2
    finally:
        up.stop()


def test_a_post_is_not_sent_twice_when_the_kept_connection_closes_under_it(make_server):
    up = ClosingUpstream(close_on=2)
    try:
        srv = proxy_server(make_server, up)
        assert harness.http(srv.port, "/first").status == 200
        resp = harness.http(srv.port, "/form", method="POST", body=b"a=1")
        # The server may have acted on it: it is not sent again (as nginx).
        assert resp.status == 502
        assert [line for line in up.seen if line.startswith("POST")] == ["POST /form HTTP/1.1"]
    finally:
        up.stop()


def test_upstream_closing_idle_connections_at_random_costs_no_request(make_server):
    # The upstream closes each kept connection after a random idle time of
    # up to 2 ms, so some closes cross a request the proxy just sent on it.
    up = ClosingUpstream(idle_close_ms=2)
    try:
        srv = proxy_server(make_server, up)

        def client(n):
            statuses = []
            for i in range(60):
                resp = harness.http(srv.port, f"/c{n}/{i}")
                statuses.append((resp.status, resp.body == f"/c{n}/{i}".encode()))
            return statuses

        with ThreadPoolExecutor(8) as pool:
            results = [s for r in pool.map(client, range(8)) for s in r]
        assert results == [(200, True)] * len(results)
        # The upstream did close connections the proxy had kept (else this
        # test tried nothing).
        assert up.connections > 20
    finally:
        up.stop()
