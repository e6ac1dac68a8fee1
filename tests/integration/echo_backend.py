"""Small HTTP backends in threads of the test process.

AppBackend answers every request (any method) with what the test's
`answer(request)` returns: (status, headers, body). The request is the
http.server handler, with the body read (`request.body`, by
Content-Length); `open` counts the connections open now. It binds a
given loopback address and port, so two may share a port on 127.0.0.1
and 127.0.0.2 (what a name that moves between addresses needs).

EchoBackend answers every request with who it is and what it was asked:
"backend=NAME uri=URI host=HOST\\n" (and the request's X- fields)."""

import http.server
import threading


class AppBackend:
    def __init__(self, answer, addr="127.0.0.1", port=0, protocol="HTTP/1.1"):
        self.open = 0  # connections open now
        self.open_lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = protocol

            def setup(self):
                super().setup()
                with owner.open_lock:
                    owner.open += 1

            def finish(self):
                super().finish()
                with owner.open_lock:
                    owner.open -= 1

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length) if length else b""
                status, headers, body = answer(self)
                self.send_response(status)
                for name, value in headers.items() if isinstance(headers, dict) else headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 128  # socketserver's 5 drops connects under load: 1 s SYN retries

        self.server = Server((addr, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class EchoBackend(AppBackend):
    def __init__(self, name, addr="127.0.0.1", port=0):
        def answer(request):
            host = request.headers.get("Host", "")
            extra = "".join(f" {k.lower()}={v}" for k, v in request.headers.items() if k.lower().startswith("x-"))
            body = f"backend={name} uri={request.path} host={host}{extra}\n".encode()
            return 200, [("Content-Type", "text/plain"), ("X-Backend", name),
                         ("Set-Cookie", f"sid={name}; Path=/")], body

        super().__init__(answer, addr, port)
