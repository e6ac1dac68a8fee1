"""stub_status: nginx's exact text (dashboards parse it), with counters
that match what the test sent, summed over the workers; the
$connections_* variables; methods other than GET and HEAD refused."""

import re

import pytest

from harness import Conn, base_conf, http, wait_until

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        location = /status { stub_status; }
        location = /vars { return 200 "$connections_active $connections_reading $connections_writing $connections_waiting"; }
        location / { return 200 "ok"; }
        location = /auth { return 204; }
        location = /guarded { auth_request /auth; empty_gif; }
    }
"""

PAGE = re.compile(r"\AActive connections: (\d+) \nserver accepts handled requests\n (\d+) (\d+) (\d+) \n"
                  r"Reading: (\d+) Writing: (\d+) Waiting: (\d+) \n\Z")


@pytest.fixture
def srv(make_server):
    return make_server(base_conf(CONF, main="worker_processes 2;"))


def closed_request(port, path="/"):
    """One request on its own connection, then wait until the server closed it."""
    with Conn(port) as c:
        r = c.request("GET", path, [("Connection", "close")])
        assert c.closed_within(10)
    return r


def status(port):
    r = closed_request(port, "/status")
    assert r.status == 200
    assert r.header("Content-Type") == "text/plain"
    m = PAGE.match(r.text())
    assert m, repr(r.text())
    return list(map(int, m.groups()))


def test_counters_match_what_was_sent(srv):
    # The harness's readiness probe was a connection too, and a slow
    # (sanitized) server may count it a moment late: count from the first
    # two status reads that differ by just the second one.
    base = []

    def settled():
        before, after = status(srv.port), status(srv.port)
        base[:] = after
        return (after[1] - before[1], after[3] - before[3]) == (1, 1)

    wait_until(settled, 10, what="the counters to settle")
    _, accepts0, handled0, requests0, _, _, _ = base
    for _ in range(5):
        assert closed_request(srv.port).status == 200
    keep = Conn(srv.port)  # stays open, idle, after three requests
    try:
        for _ in range(3):
            assert keep.request("GET", "/").status == 200
        _, accepts, handled, requests, _, _, _ = status(srv.port)
        # 5 closed connections, the kept one and this status one; 5 + 3 + 1 requests.
        assert (accepts - accepts0, handled - handled0, requests - requests0) == (7, 7, 9)
        # Open now: the idle kept one and the one asking, which is writing.
        # (The server may see the probe or a finished request close a moment
        # late: poll.)
        wait_until(lambda: [v for i, v in enumerate(status(srv.port)) if i in (0, 4, 5, 6)] == [2, 0, 1, 1], 10,
                   what="Active 2, Reading 0, Writing 1, Waiting 1")
    finally:
        keep.close()


def test_variables(srv):
    keep = Conn(srv.port)
    try:
        assert keep.request("GET", "/").status == 200
        wait_until(lambda: closed_request(srv.port, "/vars").text() == "2 0 1 1", 10,
                   what="$connections_active/reading/writing/waiting 2 0 1 1")
    finally:
        keep.close()


def test_only_get_and_head(srv):
    assert http(srv.port, "/status", method="POST", body=b"x").status == 405
    r = http(srv.port, "/status", method="HEAD")
    assert r.status == 200 and r.body == b""


def test_subrequests_are_not_requests(srv):
    # An auth_request subrequest per request: the count still grows by one
    # per client request, as nginx's.
    def settled():
        a, b = status(srv.port), status(srv.port)
        return b[3] - a[3] == 1 and b
    before = wait_until(settled, 10, what="the counters to settle")
    for _ in range(4):
        assert closed_request(srv.port, "/guarded").status == 200
    after = status(srv.port)
    assert after[3] - before[3] == 5  # four guarded requests and this status one
