"""grpc_pass to an upstream block with `keepalive`: calls reuse the HTTP/2
connection (the next call opens the next stream on it), counted on the
upstream side by the peer address (ip:port) the gRPC server (python3-grpcio)
sees for each call. keepalive_requests bounds the calls per connection; a
restarted server, a server that sends GOAWAY (max_connection_age), a status
error and a deadline exceeded leave every call answered. The same file
passes with TORII_BIN=/usr/sbin/nginx, but for the tests against a scripted
HTTP/2 upstream (h2_grpc_upstream.py) marked as torii's own: nginx closes
an idle upstream connection on any byte, PING included, and answers a
refused stream 502.""" 

import threading
import time
from concurrent import futures

import pytest

grpc = pytest.importorskip("grpc")

from harness import IS_NGINX, base_conf, PortLease, wait_until  # noqa: E402
from h2_grpc_upstream import H2GrpcUpstream  # noqa: E402

SERVICE = "test.Echo"
CHUNK = b"y" * 1000


class Backend:
    """A gRPC server that notes, per call, the connection it came on."""

    def __init__(self, port=0, options=(), bdp_probe=False):
        self.peers = []
        self.times = []  # when each call came, beside its peer
        self._lock = threading.Lock()
        handler = grpc.method_handlers_generic_handler(SERVICE, {
            "Unary": grpc.unary_unary_rpc_method_handler(self.unary),
            "ServerStream": grpc.unary_stream_rpc_method_handler(self.server_stream),
            "Slow": grpc.unary_unary_rpc_method_handler(self.slow),
            "Fail": grpc.unary_unary_rpc_method_handler(self.fail),
        })
        # grpc's bandwidth probe is a PING that may come just after a call,
        # while the proxy holds the connection idle: nginx closes on it, so
        # the counts below would be luck with nginx. The PING case has its
        # own test (test_ping_while_idle_is_answered_and_the_connection_kept).
        options = [("grpc.http2.bdp_probe", int(bdp_probe)), *options]
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=options)
        self.server.add_generic_rpc_handlers((handler,))
        self.port = self.server.add_insecure_port(f"127.0.0.1:{port}")
        assert self.port, "the gRPC server could not bind"
        self.server.start()

    def note(self, context):
        with self._lock:
            self.peers.append(context.peer())
            self.times.append(time.monotonic())

    def connections(self):
        with self._lock:
            return len(set(self.peers))

    def unary(self, request, context):
        self.note(context)
        return b"echo:" + request

    def server_stream(self, request, context):
        self.note(context)
        for i in range(int(request)):
            yield b"%d:" % i + CHUNK

    def slow(self, request, context):
        self.note(context)
        deadline = time.monotonic() + 5
        while context.is_active() and time.monotonic() < deadline:
            time.sleep(0.01)
        return request

    def fail(self, request, context):
        self.note(context)
        context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")

    def stop(self):
        self.server.stop(None).wait(10)


@pytest.fixture
def backends():
    made = []

    def make(**kwargs):
        b = Backend(**kwargs)
        made.append(b)
        return b

    yield make
    for b in made:
        b.stop()


def front(make_server, backend_port, upstream_extra=""):
    """torii (or nginx) with two locations: / to an upstream block with
    keepalive 4 (plus `upstream_extra`), /plain/ to one without."""
    return make_server(base_conf(f"""
    upstream kept {{
        server 127.0.0.1:{backend_port};
        keepalive 4;
        {upstream_extra}
    }}
    upstream plain {{
        server 127.0.0.1:{backend_port};
    }}
    server {{
        listen 127.0.0.1:@PORT@ http2;
        location / {{
            grpc_pass grpc://kept;
            grpc_read_timeout 10s;
        }}
        location /plain/ {{
            rewrite ^/plain(/.*)$ $1 break;
            grpc_pass grpc://plain;
        }}
    }}"""), name="front")


@pytest.fixture
def channel_to():
    made = []

    def make(srv):
        ch = grpc.insecure_channel(f"127.0.0.1:{srv.port}")
        made.append(ch)
        return ch

    yield make
    for ch in made:
        ch.close()


def call(ch, name, payload=b"x", timeout=10, prefix=""):
    return ch.unary_unary(f"{prefix}/{SERVICE}/{name}")(payload, timeout=timeout)


def test_sequential_calls_share_one_connection(make_server, backends, channel_to):
    b = backends()
    ch = channel_to(front(make_server, b.port))
    for i in range(20):
        assert call(ch, "Unary", b"%d" % i) == b"echo:%d" % i
    assert b.connections() == 1, [p[-5:] for p in b.peers]
    # Without keepalive every call has a connection of its own.
    b.peers.clear()
    for i in range(20):
        assert call(ch, "Unary", b"%d" % i, prefix="/plain") == b"echo:%d" % i
    assert b.connections() == 20, b.peers


@pytest.mark.skipif(IS_NGINX, reason="nginx closes an idle upstream connection on any byte it reads")
def test_bandwidth_probe_pings_do_not_end_the_connection(make_server, backends, channel_to):
    # The real server's PINGs after a call reach the idle connection now
    # and then; they are answered, and the calls stay on one connection.
    b = backends(bdp_probe=True)
    ch = channel_to(front(make_server, b.port))
    for i in range(50):
        assert call(ch, "Unary", b"%d" % i * 100) == b"echo:" + b"%d" % i * 100
    assert b.connections() == 1, [p[-5:] for p in b.peers]


def test_streaming_then_unary_on_the_same_connection(make_server, backends, channel_to):
    b = backends()
    ch = channel_to(front(make_server, b.port))
    # 200 KB of response: the connection's receive window is spent and
    # renewed during the call, and the next calls go on with that state.
    replies = list(ch.unary_stream(f"/{SERVICE}/ServerStream")(b"200", timeout=20))
    assert replies == [b"%d:" % i + CHUNK for i in range(200)]
    for i in range(5):
        assert call(ch, "Unary", b"after%d" % i) == b"echo:after%d" % i
    replies = list(ch.unary_stream(f"/{SERVICE}/ServerStream")(b"3", timeout=20))
    assert replies == [b"%d:" % i + CHUNK for i in range(3)]
    assert b.connections() == 1, [p[-5:] for p in b.peers]


def test_keepalive_requests_bounds_calls_per_connection(make_server, backends, channel_to):
    b = backends()
    ch = channel_to(front(make_server, b.port, "keepalive_requests 5;"))
    for i in range(20):
        assert call(ch, "Unary", b"%d" % i) == b"echo:%d" % i
    assert b.connections() == 4, b.peers
    counts = {}
    for p in b.peers:
        counts[p] = counts.get(p, 0) + 1
    assert sorted(counts.values()) == [5, 5, 5, 5], counts


def test_keepalive_time_bounds_a_connections_age(make_server, backends, channel_to):
    b = backends()
    ch = channel_to(front(make_server, b.port, "keepalive_time 300ms;"))
    deadline = time.monotonic() + 15
    i = 0
    while b.connections() < 3:
        assert time.monotonic() < deadline, "calls never moved to a new connection"
        assert call(ch, "Unary", b"%d" % i) == b"echo:%d" % i
        i += 1
    with b._lock:
        spans = {}
        for peer, t in zip(b.peers, b.times):
            first, _ = spans.get(peer, (t, t))
            spans[peer] = (first, t)
    # A call that starts before the limit still ends on its connection.
    assert all(last - first < 0.3 + 1.0 for first, last in spans.values()), spans
    assert len(b.peers) > b.connections()  # calls did share connections meanwhile


def test_keepalive_timeout_closes_an_idle_connection(make_server, scripted, channel_to):
    up = scripted()
    ch = channel_to(front(make_server, up.port, "keepalive_timeout 200ms;"))
    assert call(ch, "Unary", b"one") == b"h2:one"
    wait_until(lambda: up.connections[0].closed, 10, what="the idle connection's close")
    assert call(ch, "Unary", b"two") == b"h2:two"
    assert len(up.connections) == 2


def test_restarted_server_next_call_succeeds(make_server, backends, channel_to):
    lease = PortLease()
    try:
        first = backends(port=lease.port)
        ch = channel_to(front(make_server, lease.port))
        for i in range(3):
            assert call(ch, "Unary", b"%d" % i) == b"echo:%d" % i
        assert first.connections() == 1
        first.stop()  # the kept connection dies with it
        second = backends(port=lease.port)
        for i in range(5):
            assert call(ch, "Unary", b"again%d" % i) == b"echo:again%d" % i
        assert second.connections() == 1, second.peers
    finally:
        lease.release()


def test_server_that_sends_goaway_loses_no_call(make_server, backends, channel_to):
    # max_connection_age: the server sends GOAWAY on its connections every
    # ~100 ms (with a grace for calls in flight), while calls keep coming.
    b = backends(options=[("grpc.max_connection_age_ms", 100), ("grpc.max_connection_age_grace_ms", 2000)])
    ch = channel_to(front(make_server, b.port))
    for i in range(50):
        assert call(ch, "Unary", b"%d" % i) == b"echo:%d" % i
        time.sleep(0.01)  # calls spread over several connection ages (pacing, not a wait for readiness)
    assert len(b.peers) == 50
    assert 1 < b.connections() < 50, b.connections()


def test_errors_do_not_poison_the_kept_connection(make_server, backends, channel_to):
    b = backends()
    ch = channel_to(front(make_server, b.port))
    assert call(ch, "Unary", b"1") == b"echo:1"
    with pytest.raises(grpc.RpcError) as e:
        call(ch, "Fail")
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert e.value.details() == "no such thing"
    assert call(ch, "Unary", b"2") == b"echo:2"
    # A status error is a complete response: the connection stays.
    assert b.connections() == 1, [p[-5:] for p in b.peers]
    with pytest.raises(grpc.RpcError) as e:
        call(ch, "Slow", timeout=0.5)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The abandoned call's connection is closed; the next calls are fine
    # and share one connection again.
    b.peers.clear()
    for i in range(5):
        assert call(ch, "Unary", b"after%d" % i) == b"echo:after%d" % i
    assert b.connections() == 1, [p[-5:] for p in b.peers]


@pytest.fixture
def scripted():
    made = []

    def make(**kwargs):
        u = H2GrpcUpstream(**kwargs)
        made.append(u)
        return u

    yield make
    for u in made:
        u.stop()


@pytest.mark.skipif(IS_NGINX, reason="nginx closes an idle upstream connection on any byte it reads")
def test_ping_while_idle_is_answered_and_the_connection_kept(make_server, scripted, channel_to):
    up = scripted()
    ch = channel_to(front(make_server, up.port))
    assert call(ch, "Unary", b"one") == b"h2:one"
    up.ping(0)
    wait_until(lambda: up.connections[0].ping_acks == 1, 10, what="the PING's acknowledgement")
    assert call(ch, "Unary", b"two") == b"h2:two"
    assert len(up.connections) == 1
    assert up.connections[0].streams == [1, 3]


@pytest.mark.skipif(IS_NGINX, reason="nginx answers a refused stream 502 (upstream rejected request)")
@pytest.mark.parametrize("how", ["refuse", "goaway"])
def test_call_refused_on_a_kept_connection_goes_again(make_server, scripted, channel_to, how):
    # The second call on the first connection is refused (RST_STREAM
    # REFUSED_STREAM, or a GOAWAY whose last stream is the first call's):
    # the upstream did not look at it, so it goes on a new connection and
    # the client never sees the refusal.
    up = scripted(script=lambda conn, n: how if (conn, n) == (0, 1) else "ok")
    srv = front(make_server, up.port)
    ch = channel_to(srv)
    assert call(ch, "Unary", b"one") == b"h2:one"
    assert call(ch, "Unary", b"two") == b"h2:two"
    assert len(up.connections) == 2
    assert up.connections[0].streams == [1, 3]
    assert up.connections[1].streams == [1]
    assert call(ch, "Unary", b"three") == b"h2:three"
    assert up.connections[1].streams == [1, 3]
