"""stream {} with TLS: map (ngx_stream_map_module), ssl_preread (SNI
routing without terminating TLS), `listen ... ssl` (TLS terminated, plain
to the upstream) and proxy_ssl (TLS to the upstream). The peers are the
stream tests' Python backends, Python's ssl module (a real ClientHello,
TLS backends), curl and openssl-made certificates; the same tests run
against Debian's nginx with its stream module loaded."""

import re
import signal
import socket
import ssl
import subprocess
import urllib.parse
import time

import pytest

from harness import IS_NGINX, base_conf, wait_until
import stream_backends as sb
from stream_harness import (STREAM_MODULE, check_refused, check_t, connect, log_line, error_log_has, peers,  # noqa: F401
                            read_exactly, read_to_end, stream_conf)
from test_client_cert import whole_days_left
from test_proxy_ssl import pki  # noqa: F401  (the CA, upstream.test's certificate, a client certificate)

PREREAD_LOG = ("log_format sni '$remote_addr:$remote_port \"$ssl_preread_server_name\" \"$ssl_preread_protocol\" "
               "\"$ssl_preread_alpn_protocols\" $upstream_addr $status';")


def client_hello(name=None, alpn=None):
    """The first flight of Python's TLS client (OpenSSL): a ClientHello."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if alpn:
        ctx.set_alpn_protocols(alpn)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname=name)
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return outgoing.read()


# ---- map ---------------------------------------------------------------------


def test_map_value_names_a_group_or_an_address(make_server, peers):
    grouped = peers("echo", "grouped")
    direct = peers("echo", "direct")
    server = make_server(stream_conf(f"""
        map $server_port $target {{
            @PORT0@ pool;
            default 127.0.0.1:{direct.port};
        }}
        upstream pool {{ server 127.0.0.1:{grouped.port}; }}
        server {{
            listen 127.0.0.1:@PORT0@;
            listen 127.0.0.1:@PORT1@;
            proxy_pass $target;
        }}"""), nports=2)
    with connect(server.ports[0]) as s:
        assert read_exactly(s, 8) == b"grouped\n"
    with connect(server.ports[1]) as s:
        assert read_exactly(s, 7) == b"direct\n"


HOSTNAMES = [
    ("A.Example.com", "exact"),          # keys compare without case
    ("b.example.com.", "short"),         # a trailing dot is dropped; *.example.com
    ("x.y.wild.example.com", "head"),    # the longest leading wildcard wins
    ("dot.example.com", "dot"),          # .dot.example.com: the bare name too
    ("www.dot.example.com", "dot"),
    ("www.tail.org", "tail"),            # www.tail.*
    ("re7.example.net", "regex"),
    ("example.net", "none"),             # the default
]


def test_map_hostnames_wildcards_and_regex(make_server):
    names = "\n".join(f"@PORT{i}@ {name};" for i, (name, _) in enumerate(HOSTNAMES))
    listens = "\n".join(f"listen 127.0.0.1:@PORT{i}@;" for i in range(len(HOSTNAMES)))
    server = make_server(stream_conf(f"""
        map $server_port $name {{
            {names}
        }}
        map $name $route {{
            hostnames;
            default none;
            a.example.com exact;
            *.example.com short;
            *.wild.example.com head;
            .dot.example.com dot;
            www.tail.* tail;
            "~^re[0-9]+[.]" regex;
        }}
        server {{
            {listens}
            return "$route\\n";
        }}"""), nports=len(HOSTNAMES))
    for i, (name, route) in enumerate(HOSTNAMES):
        with connect(server.ports[i]) as s:
            assert read_to_end(s) == f"{route}\n".encode(), name


# ---- ssl_preread ---------------------------------------------------------------


@pytest.fixture
def sni_router(make_server, peers):
    one, two, other = peers("echo", "one"), peers("echo", "two"), peers("echo", "other")
    server = make_server(stream_conf(f"""
        {PREREAD_LOG}
        map $ssl_preread_server_name $backend {{
            hostnames;
            one.example.com u1;
            two.example.com u2;
            default 127.0.0.1:{other.port};
        }}
        upstream u1 {{ server 127.0.0.1:{one.port}; }}
        upstream u2 {{ server 127.0.0.1:{two.port}; }}
        server {{
            listen 127.0.0.1:@PORT@;
            ssl_preread on;
            preread_timeout 2s;
            proxy_pass $backend;
            access_log @PREFIX@/logs/access.log sni;
        }}"""))
    server.backends = {"one": one, "two": two, "other": other}
    return server


@pytest.mark.parametrize("name, greeting", [("one.example.com", b"one\n"), ("TWO.example.com", b"two\n"),
                                            ("three.example.com", b"other\n"), (None, b"other\n")])
def test_sni_routes_to_backend_and_hello_passes_on(sni_router, name, greeting):
    hello = client_hello(name, ["h2", "http/1.1"])
    with connect(sni_router.port) as s:
        s.sendall(hello)
        assert read_exactly(s, len(greeting)) == greeting
        # The backend echoes: the hello reached it byte for byte.
        assert read_exactly(s, len(hello)) == hello
        port = s.getsockname()[1]
    line = log_line(sni_router, port)
    assert f'"{name or ""}" "TLSv1.3" "h2,http/1.1"' in line, line
    assert line.endswith(" 200"), line


def test_hello_split_byte_by_byte(sni_router):
    hello = client_hello("two.example.com")
    with connect(sni_router.port) as s:
        for i in range(len(hello)):
            s.send(hello[i:i + 1])
        assert read_exactly(s, 4) == b"two\n"
        assert read_exactly(s, len(hello)) == hello
        port = s.getsockname()[1]
    assert '"two.example.com" "TLSv1.3" ""' in log_line(sni_router, port)


def test_plain_text_is_proxied_with_no_preread_variables(sni_router):
    with connect(sni_router.port) as s:
        s.sendall(b"hello, not TLS\n")
        assert read_exactly(s, 6) == b"other\n"
        assert read_exactly(s, 15) == b"hello, not TLS\n"
        port = s.getsockname()[1]
    assert '"-" "-" "-"' in log_line(sni_router, port)


def test_ssh_and_tls_on_one_port(make_server, peers):
    """nginx's documented example: $ssl_preread_protocol is empty for a
    client that is not TLS (SSH), and tells TLS 1.2 from later ones."""
    ssh, old, tls = peers("echo", "ssh"), peers("echo", "tls12"), peers("echo", "tls")
    server = make_server(stream_conf(f"""
        map $ssl_preread_protocol $upstream {{
            ""        127.0.0.1:{ssh.port};
            "TLSv1.2" 127.0.0.1:{old.port};
            default   127.0.0.1:{tls.port};
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass $upstream;
            ssl_preread on;
        }}"""))
    ctx12 = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx12.check_hostname = False
    ctx12.verify_mode = ssl.CERT_NONE
    ctx12.maximum_version = ssl.TLSVersion.TLSv1_2
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    with pytest.raises(ssl.SSLWantReadError):
        ctx12.wrap_bio(incoming, outgoing, server_hostname="old.example.com").do_handshake()
    for first, greeting in ((b"SSH-2.0-OpenSSH_9.2\r\n", b"ssh\n"), (outgoing.read(), b"tls12\n"),
                            (client_hello("new.example.com"), b"tls\n")):
        with connect(server.port) as s:
            s.sendall(first)
            assert read_exactly(s, len(greeting)) == greeting
            assert read_exactly(s, len(first)) == first


def test_preread_timeout_ends_session_without_proxying(sni_router):
    with connect(sni_router.port) as s:
        s.sendall(client_hello("one.example.com")[:20])  # a hello that never ends
        started = time.monotonic()
        assert read_to_end(s) == b""
        waited = time.monotonic() - started
        port = s.getsockname()[1]
    assert 1.5 < waited < 8, waited
    assert all(b.accepted == 0 for b in sni_router.backends.values())
    line = log_line(sni_router, port)
    assert line.endswith(" 200"), line


def test_preread_buffer_full_is_400(make_server, peers):
    backend = peers("echo")
    server = make_server(stream_conf(f"""
        {PREREAD_LOG}
        server {{
            listen 127.0.0.1:@PORT@;
            ssl_preread on;
            preread_buffer_size 64;
            proxy_pass 127.0.0.1:{backend.port};
            access_log @PREFIX@/logs/access.log sni;
        }}"""))
    with connect(server.port) as s:
        s.sendall(client_hello("long.example.com"))  # longer than 64 bytes
        assert read_to_end(s) == b""
        port = s.getsockname()[1]
    assert log_line(server, port).endswith(" 400")
    error_log_has(server, r"preread buffer full")
    assert backend.accepted == 0


# ---- listen ... ssl --------------------------------------------------------------

SSL_LOG = "log_format tls '$remote_addr:$remote_port $ssl_protocol $ssl_cipher $ssl_server_name $ssl_session_reused $status';"


@pytest.fixture
def tls_front(make_server, pki):
    """`listen ... ssl` in stream in front of an http server of the same
    process (PORT1) that answers plain HTTP."""
    main = f"load_module {STREAM_MODULE};\n" if IS_NGINX else ""
    stream = f"""stream {{
        {SSL_LOG}
        ssl_certificate {pki}/upstream.crt;
        ssl_certificate_key {pki}/upstream.key;
        server {{
            listen 127.0.0.1:@PORT0@ ssl;
            ssl_protocols TLSv1.2 TLSv1.3;
            ssl_session_cache shared:streamtls:1m;
            ssl_session_timeout 5m;
            ssl_handshake_timeout 2s;
            proxy_pass 127.0.0.1:@PORT1@;
            access_log @PREFIX@/logs/access.log tls;
        }}
        server {{
            listen 127.0.0.1:@PORT2@ ssl;
            ssl_verify_client on;
            ssl_client_certificate {pki}/ca.crt;
            proxy_pass 127.0.0.1:@PORT1@;
        }}
        server {{
            listen 127.0.0.1:@PORT3@ ssl;
            ssl_alpn imap http/1.1;
            return "alpn=$ssl_alpn_protocol curve=$ssl_curve curves=$ssl_curves id=$ssl_session_id ciphers=$ssl_ciphers\n";
        }}
        server {{
            listen 127.0.0.1:@PORT4@ ssl;
            ssl_verify_client optional;
            ssl_client_certificate {pki}/ca.crt;
            return "$ssl_client_verify|$ssl_client_s_dn|$ssl_client_i_dn|$ssl_client_serial|$ssl_client_escaped_cert|$ssl_client_v_end|$ssl_client_v_remain\n";
        }}
    }}
"""
    http = """server {
        listen 127.0.0.1:@PORT1@;
        access_log off;
        location / { return 200 "plain behind tls: $scheme $remote_addr\\n"; }
    }"""
    return make_server(base_conf(http, main=main + stream, error_level="info"), nports=5)


def curl(port, pki, *extra):
    return subprocess.run(["curl", "-sS", "--max-time", "10", "--cacert", f"{pki}/ca.crt",
                           "--resolve", f"upstream.test:{port}:127.0.0.1", *extra,
                           f"https://upstream.test:{port}/"], capture_output=True, text=True)


def test_tls_terminated_then_plain_to_http_backend(tls_front, pki):
    r = curl(tls_front.ports[0], pki, "--tlsv1.3")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "plain behind tls: http 127.0.0.1\n"

    def line():
        text = tls_front.access_log.read_text() if tls_front.access_log.exists() else ""
        return next((l for l in text.splitlines() if " upstream.test " in l), None)
    entry = wait_until(line, 10, what="the TLS session's log line").split()
    assert entry[1:] == ["TLSv1.3", "TLS_AES_256_GCM_SHA384", "upstream.test", ".", "200"], entry


def test_tls_session_is_resumed(tls_front, pki):
    ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2  # a session id from the shared cache

    def get(session=None):
        raw = socket.create_connection(("127.0.0.1", tls_front.ports[0]), timeout=10)
        with ctx.wrap_socket(raw, server_hostname="upstream.test", session=session) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            body = read_to_end(s)
            return s.session, s.session_reused, s.getsockname()[1], body
    session, reused, first, body = get()
    assert not reused and b"plain behind tls" in body
    _, reused, second, _ = get(session)
    assert reused
    assert log_line(tls_front, first).split()[1:] == ["TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384", "upstream.test", ".",
                                                      "200"]
    assert log_line(tls_front, second).split()[4] == "r"


def test_client_certificate_required(tls_front, pki):
    ok = curl(tls_front.ports[2], pki, "--cert", f"{pki}/client.crt", "--key", f"{pki}/client.key")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("plain behind tls")
    refused = curl(tls_front.ports[2], pki)
    assert refused.returncode != 0 and refused.stdout == ""
    error_log_has(tls_front, r"client sent no required SSL certificate")


def test_client_certificate_variables(tls_front, pki):
    """$ssl_client_* in stream, as in http: the verdict, the names (RFC 2253),
    the serial and the escaped PEM; NONE and empty without a certificate."""
    def answer(cert):
        ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
        if cert:
            ctx.load_cert_chain(f"{pki}/client.crt", f"{pki}/client.key")
        raw = socket.create_connection(("127.0.0.1", tls_front.ports[4]), timeout=10)
        with ctx.wrap_socket(raw, server_hostname="upstream.test") as s:
            return read_to_end(s).decode()
    answered_between = [time.time()]
    verify, subject, issuer, serial, escaped, v_end, v_remain = answer(True).strip().split("|")
    answered_between.append(time.time())
    assert verify == "SUCCESS"
    assert urllib.parse.unquote(escaped) == open(f"{pki}/client.crt").read()
    expected_serial = subprocess.run(["openssl", "x509", "-in", f"{pki}/client.crt", "-noout", "-serial"],
                                     capture_output=True, text=True).stdout.strip().split("=", 1)[1]
    assert serial == expected_serial
    assert subject.startswith("CN=") and issuer.startswith("CN="), (subject, issuer)
    expected_end = subprocess.run(["openssl", "x509", "-in", f"{pki}/client.crt", "-noout", "-enddate"],
                                  capture_output=True, text=True).stdout.strip().split("=", 1)[1]
    assert v_end == expected_end
    assert int(v_remain) in whole_days_left(expected_end, answered_between)
    assert answer(False) == "NONE||||||\n"


def test_alpn_server_order_and_refusal(tls_front, pki):
    """ssl_alpn: the server's first protocol that the client offers; a
    client offering none of them is refused; one offering no ALPN is not."""
    def hello(alpn):
        ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
        if alpn:
            ctx.set_alpn_protocols(alpn)
        raw = socket.create_connection(("127.0.0.1", tls_front.ports[3]), timeout=10)
        with ctx.wrap_socket(raw, server_hostname="upstream.test") as s:
            return read_to_end(s)
    def alpn_of(answer):
        return answer.split()[0]
    assert alpn_of(hello(["http/1.1", "imap"])) == b"alpn=imap"
    assert alpn_of(hello(None)) == b"alpn="
    with pytest.raises(ssl.SSLError, match="NO_APPLICATION_PROTOCOL|no application protocol"):
        hello(["h2"])


def test_session_detail_variables(tls_front, pki):
    """$ssl_curve, $ssl_curves, $ssl_ciphers (OpenSSL's names) and
    $ssl_session_id (hex)."""
    ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
    ctx.set_ecdh_curve("prime256v1")  # Python offers one group this way
    raw = socket.create_connection(("127.0.0.1", tls_front.ports[3]), timeout=10)
    with ctx.wrap_socket(raw, server_hostname="upstream.test") as s:
        fields = dict(f.split("=", 1) for f in read_to_end(s).decode().split())
    assert fields["curve"] == "prime256v1" and fields["curves"] == "prime256v1", fields
    assert fields["ciphers"].split(":")[:3] == ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
                                                "TLS_AES_128_GCM_SHA256"], fields  # Python's TLS 1.3 suites first
    assert re.fullmatch(r"([0-9a-f]{2})*", fields["id"]), fields  # (none without a session cache in nginx)


def test_handshake_timeout(tls_front):
    with connect(tls_front.ports[0]) as s:
        started = time.monotonic()
        assert read_to_end(s) == b""  # no ClientHello: closed after ssl_handshake_timeout
        assert 1.5 < time.monotonic() - started < 8


# ---- proxy_ssl ---------------------------------------------------------------------


class TlsEcho(sb.TcpServer):
    """An echo backend over TLS with upstream.test's certificate; records
    the server names its clients sent."""

    def __init__(self, pki):
        self.names = []
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(f"{pki}/upstream.crt", f"{pki}/upstream.key")
        self.ctx.sni_callback = lambda sock, name, ctx: self.names.append(name)

        def handler(conn):
            with self.ctx.wrap_socket(conn, server_side=True) as tls:
                while True:
                    data = tls.recv(65536)
                    if not data:
                        break
                    tls.sendall(data)
        super().__init__(handler)


@pytest.fixture
def tls_backend(pki):
    b = TlsEcho(pki)
    yield b
    b.close()


def proxy_ssl_server(make_server, pki, backend, name):
    return make_server(stream_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
            proxy_ssl on;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate {pki}/ca.crt;
            proxy_ssl_name {name};
            proxy_ssl_server_name on;
            proxy_ssl_protocols TLSv1.2 TLSv1.3;
            proxy_ssl_session_reuse on;
        }}"""))


@pytest.mark.parametrize("name", ["upstream.test", "upstream.test:123"])  # a port is not part of the name
def test_proxy_ssl_verified_backend(make_server, pki, tls_backend, name):
    server = proxy_ssl_server(make_server, pki, tls_backend, name)
    with connect(server.port) as s:
        s.sendall(b"ping over tls\n")
        assert read_exactly(s, 14) == b"ping over tls\n"
    # (the harness's readiness probe made a session of its own too)
    assert tls_backend.names and set(tls_backend.names) == {"upstream.test"}


def test_proxy_ssl_wrong_name_is_refused(make_server, pki, tls_backend):
    server = proxy_ssl_server(make_server, pki, tls_backend, "wrong.test")
    with connect(server.port) as s:
        s.sendall(b"ping\n")
        assert read_to_end(s) == b""
    error_log_has(server, r'upstream SSL certificate does not match "wrong.test"')


def test_proxy_ssl_name_from_a_variable(make_server, pki, tls_backend):
    """Plain client -> TLS upstream, the name (SNI) rendered from a map."""
    server = make_server(stream_conf(f"""
        map $server_port $tls_name {{ default upstream.test; }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{tls_backend.port};
            proxy_ssl on;
            proxy_ssl_name $tls_name;
            proxy_ssl_server_name on;
        }}"""))
    with connect(server.port) as s:
        s.sendall(b"x\n")
        assert read_exactly(s, 2) == b"x\n"
    # (the harness's readiness probe made a session of its own too)
    assert tls_backend.names and set(tls_backend.names) == {"upstream.test"}


# ---- configs ---------------------------------------------------------------------------


@pytest.mark.parametrize("body, message", [
    ("server { listen 127.0.0.1:@PORT@ ssl; proxy_pass 127.0.0.1:1; }",
     'no "ssl_certificate" is defined for the "listen ... ssl" directive'),
    ("server { listen 127.0.0.1:@PORT@; ssl_preread maybe; proxy_pass 127.0.0.1:1; }",
     'it must be "on" or "off"'),
    ("map $remote_addr $remote_port { default a; } server { listen 127.0.0.1:@PORT@; return $remote_port; }",
     'the duplicate "remote_port" variable'),
    ("map $nonesuch $x { default a; } server { listen 127.0.0.1:@PORT@; return $x; }",
     'unknown "nonesuch" variable'),
    ("server { listen 127.0.0.1:@PORT@; proxy_pass 127.0.0.1:1; proxy_ssl on; proxy_ssl_verify on; }",
     'no proxy_ssl_trusted_certificate for proxy_ssl_verify'),
    ("server { listen 127.0.0.1:@PORT@; proxy_pass 127.0.0.1:1; ssl_certificate /nonexistent.crt;"
     " ssl_certificate_key /nonexistent.key; }", None),
])
def test_bad_configs_are_refused(make_server, body, message):
    if message is None:
        # Certificates are only read for a server that listens with ssl.
        p = check_t(make_server, stream_conf(body))
        assert p.returncode == 0, p.stdout + p.stderr
        return
    check_refused(make_server, body, message)


def test_bad_certificate_file_is_refused(make_server, tmp_path):
    (tmp_path / "bad.crt").write_text("not a certificate\n")
    check_refused(make_server, f"""
        server {{
            listen 127.0.0.1:@PORT@ ssl;
            ssl_certificate {tmp_path}/bad.crt;
            ssl_certificate_key {tmp_path}/bad.crt;
            proxy_pass 127.0.0.1:1;
        }}""", "bad.crt")


# ---- error_log in stream ---------------------------------------------------------------


def test_server_error_log_gets_its_sessions_lines(make_server, peers):
    dead = peers("DeadPort")
    server = make_server(stream_conf(f"""
        error_log @PREFIX@/logs/stream.log info;
        server {{
            listen 127.0.0.1:@PORT0@;
            proxy_pass 127.0.0.1:{dead.port};
            error_log @PREFIX@/logs/own.log;
        }}
        server {{
            listen 127.0.0.1:@PORT1@;
            proxy_pass 127.0.0.1:{dead.port};
        }}"""), nports=2)
    for port in server.ports:
        with connect(port) as s:
            assert read_to_end(s) == b""
    own, inherited = server.prefix / "logs" / "own.log", server.prefix / "logs" / "stream.log"
    refused = r"connect\(\) failed \(111: Connection refused\) while connecting to upstream, client: 127\.0\.0\.1, "
    wait_until(lambda: own.exists() and re.search(refused + f"server: 127.0.0.1:{server.ports[0]},", own.read_text()),
               10, what="the server's own error log line")
    wait_until(lambda: inherited.exists() and re.search(refused + f"server: 127.0.0.1:{server.ports[1]},",
                                                        inherited.read_text()),
               10, what="the stream block's error log line")
    assert f"server: 127.0.0.1:{server.ports[1]}," not in own.read_text()
    assert f"server: 127.0.0.1:{server.ports[0]}," not in inherited.read_text()
    assert "while connecting to upstream" not in server.error_log_text()


def test_server_error_log_is_reopened_on_usr1(make_server, peers):
    dead = peers("DeadPort")
    server = make_server(stream_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{dead.port};
            error_log @PREFIX@/logs/own.log;
        }}"""))
    own = server.prefix / "logs" / "own.log"
    wait_until(lambda: own.exists(), 10, what="own.log")
    own.rename(server.prefix / "logs" / "own.log.1")  # as logrotate does
    server.signal(signal.SIGUSR1)
    wait_until(lambda: own.exists(), 10, what="own.log made again")

    # The new file appears a moment before the server's descriptor moves to
    # it (a busy machine may stretch that moment): a failure logged in
    # between is in own.log.1, so try again until one lands in own.log.
    def failure_logged_in_new_file():
        with connect(server.port) as s:
            assert read_to_end(s) == b""
        time.sleep(0.2)
        return "connect() failed" in own.read_text()
    wait_until(failure_logged_in_new_file, 10, what="a line in the new own.log")
