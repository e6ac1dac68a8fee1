"""A small HTTP/1.1 backend that answers every request with who it is and
what it was asked: "backend=NAME uri=URI host=HOST\n". It binds a given
loopback address, so two of them may share a port on 127.0.0.1 and
127.0.0.2 (what a name that moves between addresses needs)."""

import http.server
import threading


class EchoBackend:
    def __init__(self, name, addr="127.0.0.1", port=0):
        backend_name = name

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self):
                host = self.headers.get("Host", "")
                extra = "".join(f" {k.lower()}={v}" for k, v in self.headers.items() if k.lower().startswith("x-"))
                body = f"backend={backend_name} uri={self.path} host={host}{extra}\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Backend", backend_name)
                self.send_header("Set-Cookie", f"sid={backend_name}; Path=/")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_POST = _answer

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((addr, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
