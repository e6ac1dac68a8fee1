"""grpc_pass: a gRPC server written with python3-grpcio (generic handlers
with raw bytes, so no code generation) behind torii, reached by a grpcio
client over HTTP/2 (h2c): unary, server streaming, client streaming (more
than the upstream's initial window, so flow control works end to end), a
deadline exceeded and a status error whose grpc-status and grpc-message
come back as trailers; a dead upstream is a 502 (UNAVAILABLE to the
client), as nginx answers. The same file passes with
TORII_BIN=/usr/sbin/nginx."""

import shutil
import subprocess
import threading
import time
from concurrent import futures

import pytest

grpc = pytest.importorskip("grpc")

from harness import IS_NGINX, base_conf, PortLease, wait_until  # noqa: E402

SERVICE = "test.Echo"
CHUNK = b"x" * 4096


def unary(request, context):
    meta = dict(context.invocation_metadata())
    return b"echo:" + request + b":" + meta.get("x-test", "").encode()


def server_stream(request, context):
    for i in range(int(request)):
        yield b"%d:" % i + CHUNK


def client_stream(requests, context):
    total = 0
    count = 0
    for r in requests:
        total += len(r)
        count += 1
    return b"%d/%d" % (count, total)


def bidi(requests, context):
    for r in requests:
        yield b"re:" + r


def slow(request, context):
    deadline = time.monotonic() + 5
    while context.is_active() and time.monotonic() < deadline:
        time.sleep(0.01)
    return request


def fail(request, context):
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")


def make_certificates(d):
    """A CA and a server certificate for grpc.test, made by openssl."""
    (d / "ext.cnf").write_text("subjectAltName = DNS:grpc.test\n")
    for args in (
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
         "-subj", "/CN=gRPC Test CA"],
        ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
         "-subj", "/CN=grpc.test"],
        ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", "server.crt", "-days", "2", "-extfile", "ext.cnf"],
    ):
        r = subprocess.run(["openssl", *args], cwd=d, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    """The gRPC server: (plain port, TLS port, certificate folder)."""
    pki = tmp_path_factory.mktemp("grpc-pki")
    make_certificates(pki)
    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
        "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
        "Slow": grpc.unary_unary_rpc_method_handler(slow),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    creds = grpc.ssl_server_credentials([((pki / "server.key").read_bytes(), (pki / "server.crt").read_bytes())])
    tls_port = server.add_secure_port("127.0.0.1:0", creds)
    server.add_insecure_port(f"unix:{pki}/grpc.sock")
    server.start()
    yield port, tls_port, pki
    server.stop(None)


CONF = r"""
    server {
        listen 127.0.0.1:@PORT@ http2;
        location / {
            grpc_pass grpc://127.0.0.1:@BACKEND@;
            grpc_set_header X-Test "from-proxy";
            grpc_read_timeout 10s;
        }
        location /unix/ {
            rewrite ^/unix(/.*)$ $1 break;
            grpc_pass unix://@PKI@/grpc.sock;
            grpc_set_header X-Test "over-unix";
        }
        location /test.Echo/Gone {
            grpc_pass 127.0.0.1:@DEAD@;
        }
        location /secure/ {
            rewrite ^/secure(/.*)$ $1 break;
            grpc_pass grpcs://127.0.0.1:@TLS@;
            grpc_ssl_verify on;
            grpc_ssl_trusted_certificate @PKI@/ca.crt;
            grpc_ssl_name grpc.test;
            grpc_ssl_server_name on;
        }
        location /wrong-name/ {
            rewrite ^/wrong-name(/.*)$ $1 break;
            grpc_pass grpcs://127.0.0.1:@TLS@;
            grpc_ssl_verify on;
            grpc_ssl_trusted_certificate @PKI@/ca.crt;
        }
    }
    server {
        listen 127.0.0.1:@PORT1@;
        location / {
            grpc_pass grpc://127.0.0.1:@BACKEND@;
            grpc_set_header X-Test "from-proxy";
        }
    }
"""


@pytest.fixture
def front(make_server, backend):
    dead = PortLease()  # leased and never listened on
    try:
        port, tls_port, pki = backend
        conf = base_conf(CONF.replace("@BACKEND@", str(port)).replace("@DEAD@", str(dead.port))
                         .replace("@TLS@", str(tls_port)).replace("@PKI@", str(pki)))
        yield make_server(conf, name="front", nports=2)
    finally:
        dead.release()


@pytest.fixture
def channel(front):
    ch = grpc.insecure_channel(f"127.0.0.1:{front.port}")
    yield ch
    ch.close()


def method(ch, kind, name):
    return getattr(ch, kind)(f"/{SERVICE}/{name}")


def test_unary(channel):
    reply = method(channel, "unary_unary", "Unary")(b"hello", timeout=10)
    assert reply == b"echo:hello:from-proxy"


def test_unix_socket_upstream(channel):
    # grpc_pass unix:///path (a socket file, written with extra slashes).
    reply = channel.unary_unary(f"/unix/{SERVICE}/Unary")(b"hi", timeout=10)
    assert reply == b"echo:hi:over-unix"


def test_server_streaming(channel):
    replies = list(method(channel, "unary_stream", "ServerStream")(b"300", timeout=20))
    assert len(replies) == 300
    assert replies[299] == b"299:" + CHUNK


def test_client_streaming_beyond_the_window(channel):
    # 200 x 4 KB: far more than a 64 KB HTTP/2 window each way (and under
    # client_max_body_size, which applies as to any request body).
    reply = method(channel, "stream_unary", "ClientStream")(iter([CHUNK] * 200), timeout=20)
    assert reply == b"200/%d" % (200 * len(CHUNK))


def test_bidirectional_streaming(channel):
    # Each request waits for the previous reply: the body must flow both
    # ways at once, not after the request ends.
    replies = []
    ready = threading.Event()
    ready.set()

    def requests():
        for i in range(20):
            assert ready.wait(10)
            ready.clear()
            yield b"%d" % i

    for r in method(channel, "stream_stream", "Bidi")(requests(), timeout=20):
        replies.append(r)
        ready.set()
    assert replies == [b"re:%d" % i for i in range(20)]


def test_status_error_passes_as_trailers(channel):
    with pytest.raises(grpc.RpcError) as e:
        method(channel, "unary_unary", "Fail")(b"x", timeout=10)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert e.value.details() == "no such thing"


def test_deadline_exceeded(channel, front):
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as e:
        method(channel, "unary_unary", "Slow")(b"x", timeout=0.5)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 4
    # The proxy is still fine afterwards.
    assert method(channel, "unary_unary", "Unary")(b"again", timeout=10).startswith(b"echo:again")


def test_dead_upstream_is_unavailable(channel, front):
    with pytest.raises(grpc.RpcError) as e:
        method(channel, "unary_unary", "Gone")(b"x", timeout=10)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    wait_until(lambda: "connect() failed" in front.error_log_text(), 10, what="the connect failure in the log")


def test_grpcs_upstream_verified(channel):
    reply = channel.unary_unary(f"/secure/{SERVICE}/Unary")(b"tls", timeout=10)
    assert reply == b"echo:tls:"


def test_grpcs_wrong_name_is_unavailable(channel, front):
    # proxy_ssl_name's default is the grpc_pass host, 127.0.0.1: not in the certificate.
    with pytest.raises(grpc.RpcError) as e:
        channel.unary_unary(f"/wrong-name/{SERVICE}/Unary")(b"x", timeout=10)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    wait_until(lambda: "upstream SSL certificate does not match" in front.error_log_text(), 10,
               what="the name mismatch in the log")


def grpc_frame(message):
    return b"\x00" + len(message).to_bytes(4, "big") + message


def read_chunked(sock_file):
    """The chunks' bytes and the trailer section's lines of a chunked body."""
    body = b""
    while True:
        size = int(sock_file.readline().split(b";")[0], 16)
        if size == 0:
            break
        body += sock_file.read(size)
        assert sock_file.readline() == b"\r\n"
    trailers = []
    while True:
        line = sock_file.readline()
        if line in (b"\r\n", b""):
            return body, trailers
        trailers.append(line.rstrip(b"\r\n").decode())


def test_trailers_reach_an_http1_client_in_the_last_chunk(front):
    """An HTTP/1.1 client gets the upstream's trailers (grpc-status) in the
    chunked body's trailer section, as nginx's chunked filter sends them."""
    import socket
    message = grpc_frame(b"plain")
    with socket.create_connection(("127.0.0.1", front.ports[1]), timeout=10) as s:
        s.sendall((f"POST /{SERVICE}/Unary HTTP/1.1\r\nHost: localhost\r\nTE: trailers\r\n"
                   f"Content-Type: application/grpc\r\nContent-Length: {len(message)}\r\n"
                   "Connection: close\r\n\r\n").encode() + message)
        f = s.makefile("rb")
        status = f.readline()
        assert status.startswith(b"HTTP/1.1 200"), status
        head = []
        while (line := f.readline()) not in (b"\r\n", b""):
            head.append(line.decode().strip().lower())
        assert "transfer-encoding: chunked" in head, head
        body, trailers = read_chunked(f)
    assert body == grpc_frame(b"echo:plain:from-proxy")
    assert "grpc-status: 0" in [t.lower() for t in trailers], trailers


@pytest.mark.skipif(IS_NGINX, reason="Debian's nginx has no HTTP/3")
@pytest.mark.skipif(shutil.which("gtlsclient") is None, reason="needs gtlsclient (ngtcp2-client)")
def test_trailers_reach_an_http3_client(make_server, backend, tmp_path):
    """Over HTTP/3 the trailers follow the last DATA as a HEADERS frame
    (RFC 9114 4.1), read by an independent client (gtlsclient)."""
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "a.test.key",
                        "-out", "a.test.pem", "-days", "2", "-subj", "/CN=a.test",
                        "-addext", "subjectAltName=DNS:a.test"], cwd=tmp_path, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    srv = make_server(base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        http3 on;
        server_name a.test;
        ssl_certificate {tmp_path}/a.test.pem;
        ssl_certificate_key {tmp_path}/a.test.key;
        location / {{
            grpc_pass grpc://127.0.0.1:{backend[0]};
            grpc_set_header Content-Type application/grpc;
            grpc_set_header X-Test "over-h3";
        }}
    }}"""))
    body = tmp_path / "call.bin"
    body.write_bytes(grpc_frame(b"quic"))
    port = srv.port
    r = subprocess.run(["gtlsclient", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close",
                        "--timeout=10s", "-m", "POST", "-d", str(body), "127.0.0.1", str(port),
                        f"https://a.test:{port}/{SERVICE}/Unary"], capture_output=True, timeout=30)
    out = r.stdout.decode("latin-1") + r.stderr.decode("latin-1")
    assert "[:status: 200]" in out, out
    assert "[grpc-status: 0]" in out, out
