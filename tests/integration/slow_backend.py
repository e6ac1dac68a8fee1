"""A Python HTTP/1.x backend for tests: it answers its name, counts the
requests it got per path, holds /slow until the test releases it, and can
answer every request late (`delay`) or /health with another status
(`health_status`, which a test may change while it runs). It can be
stopped and started again on the same port (`port`, else a leased one)."""

import http.server
import threading
import time

import harness


class Backend:
    """A Python HTTP server answering its name; /slow waits until released."""

    def __init__(self, name, port=None, health_status=200, delay=0.0, start=True):
        self.name = name
        self.lease = None
        if port is None:
            self.lease = harness.PortLease()
            port = self.lease.port
        self.port = port
        self.health_status = health_status
        self.delay = delay
        self.hits = {}
        self.lock = threading.Lock()
        self.release_slow = threading.Event()
        self.slow_started = threading.Event()
        self.httpd = None
        if start:
            self.start()

    def start(self):
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with backend.lock:
                    backend.hits[self.path] = backend.hits.get(self.path, 0) + 1
                if self.path == "/slow":
                    backend.slow_started.set()
                    backend.release_slow.wait(30)
                if backend.delay:
                    time.sleep(backend.delay)
                body = backend.name.encode()
                self.send_response(backend.health_status if self.path == "/health" else 200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            allow_reuse_address = True
            request_queue_size = 128  # socketserver's 5 drops connects under load: 1 s SYN retries

        self.httpd = Server(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        """Stops answering; start() again serves on the same port."""
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def count(self, path="/"):
        with self.lock:
            return self.hits.get(path, 0)

    def close(self):
        self.release_slow.set()
        self.stop()
        if self.lease:
            self.lease.release()
            self.lease = None
