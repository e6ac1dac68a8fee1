"""An HTTP/1.1 upstream for the compression tests, in a thread of the test
process. The response is described by the request's query string:

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
import socket
import threading
import urllib.parse


def text_body(n):
    """n bytes of text that compresses well but not trivially."""
    words = [b"alpha", b"beta", b"gamma", b"delta", b"torii", b"gateway", b"compress", b"stream"]
    out = bytearray(b"<html>")
    i = 0
    while len(out) < n:
        out += words[(i * 7 + i // 3) % len(words)] + b" %d " % (i % 97)
        i += 1
    return bytes(out[:n])


class ScriptedUpstream:
    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.released = threading.Event()
        self.random_sent = 0  # bytes of random= bodies sent so far
        self.stopped = False
        self.requests = []
        threading.Thread(target=self._accept, daemon=True).start()

    def release(self):
        self.released.set()

    def stop(self):
        self.stopped = True
        self.released.set()
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
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            buf = b""
            while b"\r\n\r\n" not in buf:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
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
        except OSError:
            pass
        finally:
            conn.close()

    def _send_random(self, conn, megabytes):
        import os
        block = os.urandom(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/html\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (len(block), block)
        for _ in range(megabytes * 16):
            conn.sendall(chunk)
            self.random_sent += len(block)
        conn.sendall(b"0\r\n\r\n")
