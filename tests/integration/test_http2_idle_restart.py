"""keepalive_timeout on an HTTP/2 connection counts from the end of the
connection's last request, as nginx's does: a client that makes a request
more often than the timeout keeps its connection, and the GOAWAY comes a
whole timeout after its last response. (A request answered within one
loop turn once left the timer running from the first idle moment.)"""

import time

from h2raw import DATA, END_STREAM, GOAWAY, H2, HEADERS, NO_ERROR, goaway_code
from harness import base_conf

TIMEOUT_S = 2
PACE_S = 1.2  # between requests: under the timeout, and four of them pass it


def read_response(c, stream):
    """The response's frames up to its END_STREAM; fails on GOAWAY or close."""
    while True:
        f = c.read_frame()
        assert f is not None, f"the connection closed before the response on stream {stream}"
        assert f[0] != GOAWAY, f"GOAWAY before the response on stream {stream}"
        if f[2] == stream and f[0] in (HEADERS, DATA) and f[1] & END_STREAM:
            return


def test_each_request_starts_the_idle_time_again(make_server):
    server = make_server(base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@ http2;
        keepalive_timeout {TIMEOUT_S}s;
        location / {{ return 200 "ok\\n"; }}
    }}
"""))
    c = H2(server.port, timeout=15)
    c.handshake()
    for i in range(4):
        stream = 1 + 2 * i
        c.request(stream, "/")
        read_response(c, stream)
        if i < 3:
            time.sleep(PACE_S)  # the client's pace is what is tested, not a wait for the server
    last = time.monotonic()
    frames = c.frames_until_close()
    waited = time.monotonic() - last
    assert goaway_code(frames) == NO_ERROR
    assert TIMEOUT_S - 0.5 <= waited < TIMEOUT_S + 6, f"GOAWAY {waited:.1f}s after the last response"
