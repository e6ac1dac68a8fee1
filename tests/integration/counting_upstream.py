"""An HTTP/1.1 upstream for the cache tests, in threads of the test process,
that counts the requests it gets by path and answers as the test set the
path's route:

  up.route("/a", body=b"...", headers={"Cache-Control": "max-age=60"},
           status=200, delay=0.0, etag=None, last_modified=None,
           stall_after=None)

`delay` holds the response back (for the cache lock); `etag` and
`last_modified` are sent, and a request whose If-None-Match or
If-Modified-Since matches gets a 304; `stall_after` sends that many body
bytes and then waits until release() (a response cut by a crash);
`ranges` answers a "Range: bytes=FIRST-LAST" with a 206 of those bytes.
Unknown paths get 404. `requests[path]` counts, `seen` keeps (method,
path, headers) of each request.
"""

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CountingUpstream:
    def __init__(self):
        self.routes = {}
        self.requests = {}
        self.seen = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self, send_body):
                path = self.path.split("?", 1)[0]
                with owner.lock:
                    owner.requests[path] = owner.requests.get(path, 0) + 1
                    owner.seen.append((self.command, self.path, dict(self.headers.items())))
                    route = owner.routes.get(path)
                if route is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if route["delay"]:
                    owner.released.wait(route["delay"])
                inm = self.headers.get("If-None-Match")
                ims = self.headers.get("If-Modified-Since")
                not_modified = (route["etag"] and inm == route["etag"]) or (
                    route["last_modified"] and ims == route["last_modified"])
                status = 304 if not_modified else route["status"]
                body = b"" if status == 304 else route["body"]
                extra = {}
                m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
                if route["ranges"] and status == 200 and m and int(m.group(1)) < len(body):
                    first, last = int(m.group(1)), min(int(m.group(2)), len(body) - 1)
                    extra["Content-Range"] = f"bytes {first}-{last}/{len(body)}"
                    status, body = 206, body[first:last + 1]
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                for name, value in route["headers"].items():
                    self.send_header(name, value)
                if route["etag"]:
                    self.send_header("ETag", route["etag"])
                if route["last_modified"]:
                    self.send_header("Last-Modified", route["last_modified"])
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not send_body or not body:
                    return
                if route["stall_after"] is not None:
                    self.wfile.write(body[:route["stall_after"]])
                    self.wfile.flush()
                    owner.released.wait(30)
                    return
                self.wfile.write(body)

            def do_GET(self):
                self._answer(True)

            def do_HEAD(self):
                self._answer(False)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                if length:
                    self.rfile.read(length)
                self._answer(True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def route(self, path, body=b"hello", headers=None, status=200, delay=0.0, etag=None, last_modified=None,
              stall_after=None, ranges=False):
        with self.lock:
            self.routes[path] = dict(body=body, headers=dict(headers or {}), status=status, delay=delay, etag=etag,
                                     last_modified=last_modified, stall_after=stall_after, ranges=ranges)

    def count(self, path):
        with self.lock:
            return self.requests.get(path, 0)

    def release(self):
        self.released.set()

    def stop(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
