"""Kept-alive upstream connections that the upstream closes: a request that
meets one (the close crossed it, before any byte of an answer) goes again
on another connection, as nginx does with a cached connection, unless it
may not be sent twice (a POST)."""

import random
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import harness


class ClosingUpstream:
    """An HTTP/1.1 keep-alive upstream in a thread of the test process that
    closes its connections itself:

      close_on=N      reads the Nth request of a connection (N >= 2) and
                      closes it without a byte of answer
      idle_close_ms   after each answer, waits at most a random time up to
                      this for the next request, then closes the connection

    It answers 200 with the request's path, counts connections and notes
    every request line it read, answered or not."""

    def __init__(self, close_on=0, idle_close_ms=0.0):
        self.close_on = close_on
        self.idle_close_ms = idle_close_ms
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.connections = 0
        self.seen = []  # request lines read, in order
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self):
        self.stopped = True
        try:
            self.sock.close()
        except OSError:
            pass

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        buf = b""
        served = 0
        rng = random.Random()
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    # Between requests: the idle close, at a random moment.
                    conn.settimeout(rng.uniform(0, self.idle_close_ms) / 1000 if self.idle_close_ms and served
                                    and not buf else 10)
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                conn.settimeout(10)
                while len(buf) < length:
                    buf += conn.recv(65536)
                buf = buf[length:]
                with self.lock:
                    self.seen.append(lines[0])
                served += 1
                if served == self.close_on:
                    return
                path = lines[0].split(" ")[1].encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path))
        except OSError:
            pass
        finally:
            conn.close()


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
