"""uwsgi over TLS: `uwsgi_pass suwsgi://ADDR` and the uwsgi_ssl_* family
(verify, trusted certificate, name, server_name), through the same upstream
TLS client as proxy_ssl_*. The application is a small TLS server of the
test that reads the uwsgi packet and answers with what it saw. Passes with
TORII_BIN=/usr/sbin/nginx."""

import shutil
import socket
import ssl
import struct
import subprocess
import threading

import pytest

import harness

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def make_cert(folder, name):
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-keyout", f"{name}.key", "-out", f"{name}.crt", "-subj", f"/CN={name}",
                        "-addext", f"subjectAltName=DNS:{name}"], cwd=folder, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("uwsgi-certs")
    make_cert(d, "app.test")
    make_cert(d, "other.test")
    return d


def read_exact(c, n):
    data = b""
    while len(data) < n:
        chunk = c.recv(n - len(data))
        if not chunk:
            raise ConnectionError("short read")
        data += chunk
    return data


class TlsUwsgiApp:
    """A uwsgi application behind TLS: answers 200 with the request's
    REQUEST_URI, REQUEST_METHOD, body and the SNI the client sent."""

    def __init__(self, certs):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(str(certs / "app.test.crt"), str(certs / "app.test.key"))
        self.sni = []
        self.ctx.sni_callback = lambda sock, name, ctx: self.sni.append(name)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.plain_attempts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw):
        try:
            with self.ctx.wrap_socket(raw, server_side=True) as c:
                head = read_exact(c, 4)
                size = struct.unpack("<H", head[1:3])[0]
                data = read_exact(c, size)
                env, i = {}, 0
                while i < len(data):
                    kl = struct.unpack("<H", data[i:i + 2])[0]
                    k = data[i + 2:i + 2 + kl].decode()
                    i += 2 + kl
                    vl = struct.unpack("<H", data[i:i + 2])[0]
                    env[k] = data[i + 2:i + 2 + vl].decode()
                    i += 2 + vl
                body = read_exact(c, int(env.get("CONTENT_LENGTH") or 0))
                text = f"{env.get('REQUEST_METHOD')} {env.get('REQUEST_URI')} body={body.decode()}\n".encode()
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(text), text))
        except (ssl.SSLError, ConnectionError, OSError):
            self.plain_attempts += 1

    def stop(self):
        self.sock.close()


@pytest.fixture
def app(certs):
    a = TlsUwsgiApp(certs)
    yield a
    a.stop()


def site(make_server, app, certs, extra=""):
    conf = harness.base_conf(error_level="info", http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            uwsgi_param REQUEST_METHOD $request_method;
            uwsgi_param REQUEST_URI $request_uri;
            uwsgi_param CONTENT_LENGTH $content_length;
            uwsgi_pass suwsgi://127.0.0.1:{app.port};
            {extra}
        }}
    }}
""")
    return make_server(conf)


def test_suwsgi_speaks_uwsgi_over_tls(make_server, app, certs):
    s = site(make_server, app, certs)
    r = harness.http(s.port, "/hello?x=1")
    assert r.status == 200 and r.body == b"GET /hello?x=1 body=\n", r
    r = harness.http(s.port, "/post", method="POST", body="payload")
    assert r.status == 200 and r.body == b"POST /post body=payload\n", r


def test_verify_with_the_trusted_certificate_and_name(make_server, app, certs):
    s = site(make_server, app, certs, f"""
            uwsgi_ssl_verify on;
            uwsgi_ssl_trusted_certificate {certs}/app.test.crt;
            uwsgi_ssl_name app.test;
            uwsgi_ssl_server_name on;""")
    r = harness.http(s.port, "/v")
    assert r.status == 200 and r.body == b"GET /v body=\n", r
    assert app.sni == ["app.test"]


def test_verify_fails_with_another_ca(make_server, app, certs):
    s = site(make_server, app, certs, f"""
            uwsgi_ssl_verify on;
            uwsgi_ssl_trusted_certificate {certs}/other.test.crt;
            uwsgi_ssl_name app.test;""")
    r = harness.http(s.port, "/v")
    assert r.status == 502
    harness.wait_until(lambda: "upstream SSL certificate verify error" in s.error_log_text(), 5,
                       what="the verify error line")


def test_no_sni_by_default(make_server, app, certs):
    s = site(make_server, app, certs)
    assert harness.http(s.port, "/").status == 200
    assert app.sni == [None]
