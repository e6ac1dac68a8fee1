"""Out of descriptors, a full server queues rather than fails: with
`worker_rlimit_nofile 256` and 400 clients connected at once, torii stops
accepting while it still has descriptors for the files and upstream
sockets of the connections it holds; the rest wait in the listen queue and
are served as others close. Every request ends 200: no 500 for a file it
could not open, no 502 for an upstream socket it could not make. (nginx
passes it too: its two worker processes have 256 descriptors each.)"""

import collections
import os
import socket
import threading

import harness
from test_proxy import nginx_backend  # noqa: F401  (fixture)

CLIENTS = 400
FILES = 20
FILE_SIZE = 512 * 1024  # more than a socket buffer takes at once: the file stays open a while


def conf(backend):
    return harness.base_conf(f"""
    upstream app {{ server 127.0.0.1:{backend}; keepalive 16; }}
    server {{
        listen 127.0.0.1:@PORT@ backlog=1024;
        root @PREFIX@/html;
        location /p/ {{
            proxy_pass http://app/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
    }}""", main="worker_processes 2;\nworker_rlimit_nofile 256;", access_log=False)


def open_descriptors(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def wait_until_settled(pid):
    """Until the server has taken what it will take of the queue: its
    descriptor count the same over several polls."""
    history = []

    def settled():
        history.append(open_descriptors(pid))
        return len(history) >= 6 and len(set(history[-6:])) == 1
    harness.wait_until(settled, 20, interval=0.05, what="the server's descriptor count to settle")


def test_full_server_queues_instead_of_failing(make_server, nginx_backend):  # noqa: F811
    proxied = os.urandom(FILE_SIZE)
    backend = nginx_backend("location / { }", files={"big": proxied})
    srv = make_server(conf(backend), start=False)
    html = srv.prefix / "html"
    html.mkdir(parents=True, exist_ok=True)
    for i in range(FILES):
        (html / f"f{i}.txt").write_bytes(bytes([65 + i]) * FILE_SIZE)
    srv.start()

    results = collections.Counter()
    lock = threading.Lock()
    connected = threading.Barrier(CLIENTS + 1)
    go = threading.Event()

    def client(i):
        path = f"/f{i % FILES}.txt" if i % 2 else "/p/big"
        outcome = "no connection"
        try:
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=60)
        except OSError as e:
            s, outcome = None, repr(e)
        connected.wait()
        go.wait()
        if s is not None:
            try:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
                outcome = data[9:12].decode() if data.startswith(b"HTTP/1.1 ") else f"bad: {data[:40]!r}"
                if outcome == "200":
                    expected = bytes([65 + i % FILES]) * FILE_SIZE if i % 2 else proxied
                    if not data.endswith(b"\r\n\r\n" + expected):
                        outcome = "200 with a wrong body"
            except OSError as e:
                outcome = repr(e)
            finally:
                s.close()
        with lock:
            results[("static" if i % 2 else "proxied", outcome)] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    try:
        connected.wait(timeout=60)
        # Every client is connected (accepted, or waiting in the queue):
        # let the server take what it will, then all ask at once.
        wait_until_settled(srv.proc.pid)
    finally:
        go.set()
        for t in threads:
            t.join(timeout=120)
    assert sum(results.values()) == CLIENTS, results
    assert results == {("static", "200"): CLIENTS // 2, ("proxied", "200"): CLIENTS // 2}, \
        f"{dict(results)}\n{srv.diagnostics()}"


def test_keepalive_clients_take_turns(make_server, nginx_backend):  # noqa: F811
    """400 keep-alive clients, each asking three times and then staying
    connected: the connections the server holds end after a response
    (Connection: close) or, once quiet, are closed between requests, so
    the ones in the listen queue get their turn. A client only ever sees a whole response, or its idle connection
    closed before it asked (which it retries, as RFC 9112 9.3.1 allows)."""
    proxied = os.urandom(64 * 1024)
    backend = nginx_backend("location / { }", files={"big": proxied})
    srv = make_server(conf(backend), start=False)
    html = srv.prefix / "html"
    html.mkdir(parents=True, exist_ok=True)
    static = b"s" * 64 * 1024
    (html / "f.txt").write_bytes(static)
    srv.start()

    results = collections.Counter()
    lock = threading.Lock()

    def client(i):
        path, want = ("/p/big", proxied) if i % 2 else ("/f.txt", static)
        done, sock, buf, retries = 0, None, b"", 0
        while done < 3 and retries < 20:
            if sock is None:
                sock, buf = socket.create_connection(("127.0.0.1", srv.port), timeout=60), b""
            got = False
            try:
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
                while b"\r\n\r\n" not in buf:
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise EOFError
                    buf, got = buf + chunk, True
                head, _, rest = buf.partition(b"\r\n\r\n")
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                while len(rest) < length:
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise EOFError
                    rest, got = rest + chunk, True
                body, buf = rest[:length], rest[length:]
                outcome = "200" if head.startswith(b"HTTP/1.1 200 ") and body == want else head[:20].decode()
                with lock:
                    results[outcome] += 1
                done += 1
                if b"\r\nConnection: close" in head:
                    sock.close()
                    sock = None
            except (EOFError, ConnectionResetError, BrokenPipeError):
                sock.close()
                sock = None
                if got or buf:
                    with lock:
                        results["cut off mid-response"] += 1
                    return
                retries += 1  # closed while idle, before this request was read
        if done < 3:
            with lock:
                results["gave up"] += 1
        # Like a browser (or ab -k), keep the connection open, idle, until
        # every client is served: the server must take it back.
        everyone_served.wait(timeout=90)
        if sock is not None:
            sock.close()

    everyone_served = threading.Event()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    try:
        harness.wait_until(lambda: sum(results.values()) >= CLIENTS * 3 or "cut off mid-response" in results
                           or "gave up" in results, 60, interval=0.1,
                           what=f"every client served (so far {dict(results)})")
    finally:
        everyone_served.set()
        for t in threads:
            t.join(timeout=30)
    assert results == {"200": CLIENTS * 3}, f"{dict(results)}\n{srv.diagnostics()}"
