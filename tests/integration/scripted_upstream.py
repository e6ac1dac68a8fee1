"""HTTP/1.1 upstreams scripted by the tests, in threads of the test process.

Raw ones, for bytes an HTTP library would not send (interim responses,
trailers, a body in timed pieces, no answer at all): a
stream_backends.TcpServer whose handler is built here.

  replying(answer, complete, drain)  reads a request, writes answer(request)
  HoldingUpstream                    answers each request once released
  SteppedUpstream(pieces)            a body in pieces, each when the test says

ScriptedUpstream, for the compression tests, describes its response by the
request's query string:

  h=Name:Value    a response header (repeatable; replaces one of the same name)
  a=Name:Value    a response header added beside any of the same name (Set-Cookie)
  status=CODE     the response's status (default 200)
  n=BYTES         the body: BYTES of compressible HTML-ish text (default 2000)
  chunked=1       Transfer-Encoding: chunked, in 16 KB chunks (else Content-Length)
  pause=1         send the first 16 KB (chunked: the first chunk), then wait
                  until release() is called before sending the rest (an
                  SSE-like stream)
  gz=1            the body is gzip-compressed and sent with Content-Encoding: gzip
  random=MB       chunked, MB megabytes made of one random 64 KB block repeated:
                  as good as incompressible for deflate (its window is 32 KB)

Each connection serves one request and closes. `requests` lists each
request's line and head as (method, target, headers dict, lower-case names).
"""

import gzip
import os
import socket
import threading
import urllib.parse

from stream_backends import TcpServer


def read_until(conn, complete, data=b""):
    """Reads from conn until complete(bytes read) holds: those bytes, or
    None when the peer closes first."""
    while not complete(data):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


def head_complete(data):
    """A request head has come whole."""
    return b"\r\n\r\n" in data


def length_complete(data):
    """A request head has come whole, and the Content-Length bytes after it."""
    if b"\r\n\r\n" not in data:
        return False
    head, rest = data.split(b"\r\n\r\n", 1)
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            return len(rest) >= int(v)
    return True


def replying(answer, complete=head_complete, drain=False, timeout=None):
    """A TcpServer whose handler reads each connection's request until
    complete(bytes) holds, writes answer(request) (bytes, or a list of byte
    strings written one by one), and closes. drain: after the answer, shut
    down writing and read until the peer closes (no reset for unread bytes).
    A peer that closes before its request is whole gets nothing; `timeout`
    bounds each socket operation (None: none)."""
    def handler(conn):
        conn.settimeout(timeout)
        request = read_until(conn, complete)
        if request is None:
            return
        out = answer(request)
        for piece in [out] if isinstance(out, bytes) else out:
            conn.sendall(piece)
        if drain:
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(65536):
                pass
    return TcpServer(handler)


class HoldingUpstream(TcpServer):
    """Reads each request head and answers 200 "ok" only once `release` is
    set; `arrived` counts the heads read, so a test can look at the proxy's
    connection while it waits."""

    def __init__(self):
        self.release = threading.Event()
        self.arrived = threading.Semaphore(0)
        super().__init__(self._hold)

    def _hold(self, conn):
        if read_until(conn, head_complete) is None:
            return
        self.arrived.release()
        self.release.wait(20)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")

    def close(self):
        self.release.set()
        super().close()


class SteppedUpstream(TcpServer):
    """Answers a request with a body sent in pieces, after `headers`; each
    piece after the first waits until the test sets its event in `go`.
    `request` keeps the bytes of the request head."""

    def __init__(self, pieces, headers=b"Content-Type: text/html\r\n"):
        self.pieces = pieces
        self.headers = headers
        self.go = [threading.Event() for _ in pieces]
        self.go[0].set()
        self.request = b""
        super().__init__(self._step)

    def _step(self, conn):
        self.request = read_until(conn, head_complete)
        if self.request is None:
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\n" + self.headers + b"Connection: close\r\n\r\n")
        for event, piece in zip(self.go, self.pieces):
            if not event.wait(10):
                return
            conn.sendall(piece)

    def close(self):
        for e in self.go:
            e.set()
        super().close()


def text_body(n):
    """n bytes of text that compresses well but not trivially."""
    words = [b"alpha", b"beta", b"gamma", b"delta", b"torii", b"gateway", b"compress", b"stream"]
    out = bytearray(b"<html>")
    i = 0
    while len(out) < n:
        out += words[(i * 7 + i // 3) % len(words)] + b" %d " % (i % 97)
        i += 1
    return bytes(out[:n])


class ScriptedUpstream(TcpServer):
    def __init__(self):
        self.released = threading.Event()
        self.random_sent = 0  # bytes of random= bodies sent so far
        self.requests = []
        super().__init__(self._handle)

    def release(self):
        self.released.set()

    def stop(self):
        self.released.set()
        self.close()

    def _handle(self, conn):
        buf = read_until(conn, head_complete)
        if buf is None:
            return
        line = buf.split(b"\r\n", 1)[0].decode("latin-1")
        method, target, _ = line.split(" ", 2)
        fields = {}
        for raw in buf.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
            name, _, value = raw.decode("latin-1").partition(":")
            fields[name.strip().lower()] = value.strip()
        self.requests.append((method, target, fields))
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)
        body = text_body(int(query.get("n", ["2000"])[0]))
        headers = [("Content-Type", "text/html")]
        for h in query.get("h", []):
            name, _, value = h.partition(":")
            headers = [(k, v) for k, v in headers if k.lower() != name.lower()]
            headers.append((name, value))
        for h in query.get("a", []):
            name, _, value = h.partition(":")
            headers.append((name, value))
        status = int(query.get("status", ["200"])[0])
        if query.get("gz") == ["1"]:
            body = gzip.compress(body)
            headers.append(("Content-Encoding", "gzip"))
        if "random" in query:
            self._send_random(conn, int(query["random"][0]))
            return
        chunked = query.get("chunked") == ["1"]
        head = f"HTTP/1.1 {status} Scripted\r\nConnection: close\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers)
        head += "Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {len(body)}\r\n"
        conn.sendall(head.encode("latin-1") + b"\r\n")
        if method == "HEAD":
            return
        if not chunked:
            if query.get("pause") == ["1"]:
                conn.sendall(body[:16384])
                self.released.wait(30)
                body = body[16384:]
            conn.sendall(body)
            return
        pieces = [body[i:i + 16384] for i in range(0, len(body), 16384)]
        for i, piece in enumerate(pieces):
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            if i == 0 and query.get("pause") == ["1"]:
                self.released.wait(30)
        conn.sendall(b"0\r\n\r\n")

    def _send_random(self, conn, megabytes):
        block = os.urandom(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/html\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (len(block), block)
        for _ in range(megabytes * 16):
            conn.sendall(chunk)
            self.random_sent += len(block)
        conn.sendall(b"0\r\n\r\n")
