"""A small, misbehaving HTTP/1.1 upstream for the proxy tests. It runs in a
thread of the test process and picks its behaviour from the request path:

  /echo...        200, the body is the request exactly as received (head and body)
  /once...        answers (keep-alive by the look of it), then closes
  /stall...       reads the request and never answers
  /close...       reads the request and closes without a byte
  /midbody...     promises 100000 bytes, sends 10, closes
  /badstatus...   an invalid status line
  /badheader...   a header line without a colon
  /status/NNN     answers NNN with a short body
  /empty/NNN      answers NNN with Content-Length: 0 (an empty body), keep-alive
  /hold/S         a long poll: answers 200 after S seconds unless the proxy
                  closes first; either way noted in `holds` ("closed"/"answered")
  /big/N          N bytes, chunked, in 64 KB chunks
  /ws...          101 Switching Protocols, then echoes bytes until EOF
  /stamped        200 with its own Server and a fixed Date
  .../goto...     302 to its own absolute URL with "/goto" read as "/went"
  .../gotoroot    302 to its own absolute URL /root
  .../relgoto...  302 to the relative "/elsewhere"
  anything else   200 "NAME" (the server's name), keep-alive

A HEAD request, whatever its path, gets a 200 head that announces 1000
bytes and no body, as RFC 9110 9.3.2 has it.

Connections are kept alive (HTTP/1.1) and counted, so tests can tell
whether the proxy reused them.

ClosingUpstream, below, is a keep-alive upstream that closes its
connections itself: on the Nth request, or idle between requests;
swallow_and_close() one that reads part of a request and hangs up.
"""

import random
import socket
import threading

from stream_backends import TcpServer


class BadUpstream(TcpServer):
    def __init__(self, name="bad"):
        self.name = name
        self.requests = []  # raw request heads (and bodies), in order
        self.holds = []  # how each /hold ended: "closed" (by the proxy) or "answered"
        self.lock = threading.Lock()
        super().__init__(self._handle)

    @staticmethod
    def _read_request(conn, buf):
        """Returns (raw_request_bytes, rest) or (None, buf) at EOF."""
        while b"\r\n\r\n" not in buf:
            data = conn.recv(65536)
            if not data:
                return None, buf
            buf += data
        end = buf.index(b"\r\n\r\n") + 4
        head, buf = buf[:end], buf[end:]
        lower = head.lower()
        body = b""
        if b"\r\ntransfer-encoding: chunked" in lower:
            while True:
                while b"\r\n" not in buf:
                    buf += conn.recv(65536)
                line, buf = buf.split(b"\r\n", 1)
                size = int(line.split(b";")[0], 16)
                while len(buf) < size + 2:
                    buf += conn.recv(65536)
                body += line + b"\r\n" + buf[:size + 2]
                buf = buf[size + 2:]
                if size == 0:
                    break
        else:
            length = 0
            for line in lower.split(b"\r\n"):
                if line.startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            while len(buf) < length:
                data = conn.recv(65536)
                if not data:
                    break
                buf += data
            body, buf = buf[:length], buf[length:]
        return head + body, buf

    def _handle(self, conn):
        buf = b""
        while True:
            req, buf = self._read_request(conn, buf)
            if req is None:
                return
            with self.lock:
                self.requests.append(req)
            path = req.split(b" ", 2)[1].decode("latin-1")
            if req.startswith(b"HEAD "):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                continue
            if not self._answer(conn, path, req):
                return

    def _answer(self, conn, path, req):
        """Answers one request; False closes the connection."""
        if "/echo" in path:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                         b"X-Hop: 1\r\nKeep-Alive: timeout=5\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(req) + req)
            return True
        if path.startswith("/once"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nonce")
            return False
        if path.startswith("/stall"):
            while conn.recv(65536):
                pass
            return False
        if path.startswith("/close"):
            return False
        if path.startswith("/midbody"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n0123456789")
            return False
        if path.startswith("/badstatus"):
            conn.sendall(b"HTTP/1.1 OK\r\n\r\n")
            return False
        if path.startswith("/badheader"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nBroken header\r\nContent-Length: 2\r\n\r\nok")
            return False
        if path.startswith("/status/"):
            code = int(path.split("/")[2][:3])
            body = f"status {code} from {self.name}\n".encode()
            conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n" % (code, len(body)) + body)
            return True
        if path.startswith("/empty/"):
            code = int(path.split("/")[2][:3])
            conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n" % code)
            return True
        if path.startswith("/hold/"):
            conn.settimeout(float(path.split("/")[2]))
            try:
                closed = conn.recv(1) == b""
            except socket.timeout:
                closed = False
            except OSError:
                closed = True
            if closed:
                with self.lock:
                    self.holds.append("closed")
                return False
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate")
            with self.lock:
                self.holds.append("answered")
            return False
        if "/goto" in path:
            # A redirect to itself by absolute URL, as an upstream that knows
            # only its own address sends it: proxy_redirect's material.
            where = f"http://127.0.0.1:{self.port}" + path.replace("/goto", "/went")
            if "/gotoroot" in path:
                where = f"http://127.0.0.1:{self.port}/root"
            conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % where.encode())
            return True
        if "/relgoto" in path:
            conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n")
            return True
        if path.startswith("/big/"):
            n = int(path.split("/")[2])
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"x" * 65536
            while n > 0:
                part = chunk[:min(n, len(chunk))]
                conn.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
                n -= len(part)
            conn.sendall(b"0\r\n\r\n")
            return True
        if path.startswith("/ws"):
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            while True:
                data = conn.recv(65536)
                if not data:
                    return False
                conn.sendall(data)
        if path.startswith("/stamped"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nServer: bad-upstream\r\nDate: Mon, 01 Jan 2001 00:00:00 GMT\r\n"
                         b"Content-Length: 2\r\n\r\nok")
            return True
        body = self.name.encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        return True


class ClosingUpstream(TcpServer):
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
        self.lock = threading.Lock()
        self.seen = []  # request lines read, in order
        super().__init__(self._handle)

    def _handle(self, conn):
        buf = b""
        served = 0
        rng = random.Random()
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


def swallow_and_close():
    """A TcpServer that reads part of each request (one read) and closes
    without a word; `received` lists how many bytes each read took."""
    received = []

    def handler(conn):
        conn.settimeout(5)
        received.append(len(conn.recv(65536)))
    server = TcpServer(handler)
    server.received = received
    return server
