"""A Python HTTP/1.1 backend for tests: it answers its name, counts the
requests it got per path, and holds /slow until the test releases it."""

import http.server
import threading

import harness


class Backend:
    """A Python HTTP server answering its name; /slow waits until released."""

    def __init__(self, name):
        self.name = name
        self.lease = harness.PortLease()
        self.port = self.lease.port
        self.hits = {}
        self.lock = threading.Lock()
        self.release_slow = threading.Event()
        self.slow_started = threading.Event()
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with backend.lock:
                    backend.hits[self.path] = backend.hits.get(self.path, 0) + 1
                if self.path == "/slow":
                    backend.slow_started.set()
                    backend.release_slow.wait(30)
                body = backend.name.encode()
                self.send_response(200)
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

    def count(self, path="/"):
        with self.lock:
            return self.hits.get(path, 0)

    def close(self):
        self.release_slow.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.lease.release()
