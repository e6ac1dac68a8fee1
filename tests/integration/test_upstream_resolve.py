"""`server NAME resolve` in an upstream {} (nginx 1.27.3+, NGINX Plus): the
name is asked of the `resolver` (a small DNS server run by the test,
dns_responder.py) while torii runs, again each time its TTL runs out, and
the group's servers follow the answers without a reload. Requests flow
through every change with none failing; a server whose address left gets
no new request, finishes the one it serves and loses its idle keep-alive
connections; a name that stops answering keeps its last addresses, a name
that no longer exists loses them (nginx's zone module does both); a reload
keeps the addresses; the admin API and the metrics show them.

Debian's nginx 1.22 has no `resolve` in open source, so these run against
torii only; the rules they check are read from nginx's sources
(ngx_http_upstream_zone_module.c, ngx_http_upstream_round_robin.c)."""

import json
import threading
import urllib.request

import pytest

import harness
from dns_responder import DnsResponder
from echo_backend import AppBackend

pytestmark = pytest.mark.skipif(harness.IS_NGINX, reason="`server ... resolve` is open-source nginx 1.27.3+, not 1.22")

NAME = "svc.test"


class Backend(AppBackend):
    """An HTTP/1.1 keep-alive backend on one loopback address that answers
    its name, counts requests and open connections, and holds /slow until
    the test releases it."""

    def __init__(self, name, addr, port):
        self.name = name
        self.lock = threading.Lock()
        self.requests = 0
        self.release_slow = threading.Event()
        self.slow_started = threading.Event()
        super().__init__(self._answer, addr, port)

    def _answer(self, request):
        with self.lock:
            self.requests += 1
        if request.path == "/slow":
            self.slow_started.set()
            self.release_slow.wait(30)
        return 200, {"X-Backend": self.name}, self.name.encode()

    def count(self):
        with self.lock:
            return self.requests

    def connections(self):
        with self.open_lock:
            return self.open

    def close(self):
        self.release_slow.set()
        self.stop()


@pytest.fixture
def dns():
    d = DnsResponder()
    yield d
    d.stop()


@pytest.fixture
def backends():
    """Backends "one", "two", "three" on 127.0.0.1, .2 and .3, one port."""
    made = [Backend("one", "127.0.0.1", 0)]
    made.append(Backend("two", "127.0.0.2", made[0].port))
    made.append(Backend("three", "127.0.0.3", made[0].port))
    yield made
    for b in made:
        b.close()


TOKEN = "resolve-test-token"


@pytest.fixture(autouse=True)
def token_file(tmp_path_factory):
    global TOKEN_FILE
    path = tmp_path_factory.mktemp("token") / "admin.token"
    path.write_text(TOKEN + "\n")
    TOKEN_FILE = path


def conf(dns_port, port, workers=2, valid=""):
    return harness.base_conf(f"""
    admin_listen 127.0.0.1:@PORT1@;
    admin_token_file {TOKEN_FILE};
    upstream app {{
        zone app 64k;
        resolver 127.0.0.1:{dns_port} ipv6=off {valid};
        resolver_timeout 1s;
        server {NAME}:{port} resolve;
        keepalive 8;
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
        location = /metrics {{ metrics; }}
    }}""", main=f"worker_processes {workers};", error_level="info", access_log=False)


def get(srv, path="/"):
    return harness.http(srv.port, path)


def wait_backend(srv, name, timeout=15):
    """Polls until a request is answered by `name`."""
    harness.wait_until(lambda: get(srv).header("X-Backend") == name, timeout, what=f"a response from {name}")


class Traffic:
    """Requests sent one after another on new connections, from a thread,
    until stopped: every answer is kept."""

    def __init__(self, srv):
        self.srv = srv
        self.answers = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                r = get(self.srv)
                answer = (r.status, r.header("X-Backend"))
            except OSError as e:
                answer = ("error", str(e))
            with self.lock:
                self.answers.append(answer)

    def mark(self):
        with self.lock:
            return len(self.answers)

    def since(self, mark):
        with self.lock:
            return list(self.answers[mark:])

    def stop(self):
        self.running = False
        self.thread.join(15)
        failures = [a for a in self.answers if a[0] != 200]
        return failures


def api_request(srv, path, method="GET"):
    return urllib.request.Request(f"http://127.0.0.1:{srv.ports[1]}{path}", method=method,
                                  headers={"Authorization": f"Bearer {TOKEN}"})


def api(srv, path):
    with urllib.request.urlopen(api_request(srv, path), timeout=10) as r:
        return json.loads(r.read())


def metrics(srv):
    return get(srv, "/metrics").text()


def test_servers_follow_the_name_and_no_request_fails(make_server, dns, backends):
    one, two, three = backends
    dns.set(NAME, ["127.0.0.1"], ttl=1)
    srv = make_server(conf(dns.port, one.port), nports=2)
    wait_backend(srv, "one")
    traffic = Traffic(srv)
    try:
        # A second address joins: both take requests.
        dns.set(NAME, ["127.0.0.1", "127.0.0.2"], ttl=1)
        mark = traffic.mark()
        harness.wait_until(lambda: {"one", "two"} <= {b for _, b in traffic.since(mark)}, 15,
                           what="requests on both addresses")
        # The name moves to two other addresses: "one" leaves.
        dns.set(NAME, ["127.0.0.2", "127.0.0.3"], ttl=1)
        mark = traffic.mark()

        def one_left():
            recent = [b for _, b in traffic.since(mark)][-20:]
            return len(recent) == 20 and "one" not in recent and {"two", "three"} <= set(recent)
        harness.wait_until(one_left, 15, what="the name's new addresses alone")
        before = one.count()
        mark = traffic.mark()
        harness.wait_until(lambda: len(traffic.since(mark)) >= 30, 15, what="30 more requests")
        assert one.count() == before, "a removed address got new requests"
    finally:
        failures = traffic.stop()
    assert failures == [], failures[:5]
    assert len(traffic.answers) > 20

    # The admin API shows the servers the name resolves to, by address,
    # each named after its `server` line.
    peers = api(srv, "/api/9/http/upstreams/app")["peers"]
    assert sorted(p["server"] for p in peers) == [f"127.0.0.2:{one.port}", f"127.0.0.3:{one.port}"]
    assert {p["name"] for p in peers} == {f"{NAME}:{one.port}"}
    servers = api(srv, "/api/9/http/upstreams/app/servers")
    assert all(s["resolve"] and s["name"] == f"{NAME}:{one.port}" for s in servers), servers
    text = metrics(srv)
    assert f'torii_upstream_resolved_addresses{{upstream="app",name="{NAME}:{one.port}"}} 2' in text, text
    assert f'torii_upstream_server_up{{upstream="app",server="127.0.0.3:{one.port}"}} 1' in text
    assert f'server="127.0.0.1:{one.port}"' not in text
    # A server that follows its name is not the API's to change.
    req = api_request(srv, f"/api/9/http/upstreams/app/servers/{peers[0]['id']}", "DELETE")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    assert refused.value.code == 400
    assert json.loads(refused.value.read())["error"]["code"] == "UpstreamServerImmutable"


def test_removed_address_finishes_its_request_and_its_idle_connections_close(make_server, dns, backends):
    one, two, _ = backends
    dns.set(NAME, ["127.0.0.1"], ttl=1)
    # One worker: an idle worker switches lists at its next pick, and the
    # test needs the worker that holds the idle connections to pick.
    srv = make_server(conf(dns.port, one.port, workers=1), nports=2)
    wait_backend(srv, "one")
    for _ in range(3):
        assert get(srv).status == 200
    harness.wait_until(lambda: one.connections() >= 1, 10, what="an idle keep-alive connection to one")

    held = {}

    def slow():
        held["response"] = get(srv, "/slow")
    t = threading.Thread(target=slow, daemon=True)
    t.start()
    assert one.slow_started.wait(10)

    dns.set(NAME, ["127.0.0.2"], ttl=1)
    wait_backend(srv, "two")
    # The idle connections to the address that left are closed; the one
    # serving /slow stays.
    harness.wait_until(lambda: one.connections() == 1, 10, what="one's idle connections closed")
    assert t.is_alive()
    one.release_slow.set()
    t.join(10)
    assert held["response"].status == 200
    assert held["response"].text() == "one"
    # Its connection goes back to no pool: the address is gone.
    harness.wait_until(lambda: one.connections() == 0, 10, what="the last connection to one closed")
    before = one.count()
    for _ in range(10):
        assert get(srv).header("X-Backend") == "two"
    assert one.count() == before


def test_silent_name_keeps_its_addresses_and_a_missing_one_loses_them(make_server, dns, backends):
    one, _, three = backends
    dns.set(NAME, ["127.0.0.1"], ttl=1)
    srv = make_server(conf(dns.port, one.port, valid="valid=2s"), nports=2)
    wait_backend(srv, "one")

    # The name server stops answering: the name is asked again after
    # resolver_timeout, and the last addresses keep serving.
    dns.silent.add(NAME)
    asked = dns.questions(NAME)
    harness.wait_until(lambda: dns.questions(NAME) >= asked + 2, 20, what="the name asked again")
    harness.wait_until(lambda: "svc.test could not be resolved (110: Operation timed out)" in srv.error_log_text(),
                       10, what="the timeout in the error log")
    for _ in range(10):
        r = get(srv)
        assert (r.status, r.header("X-Backend")) == (200, "one")

    # The name no longer exists (NXDOMAIN): its servers go, as nginx's.
    with dns.lock:
        del dns.records[NAME]
    dns.silent.discard(NAME)
    harness.wait_until(lambda: get(srv).status == 502, 20, what="502 once the name is gone")
    assert "svc.test could not be resolved (3: Host not found)" in srv.error_log_text()

    # It comes back, somewhere else.
    dns.set(NAME, ["127.0.0.3"], ttl=1)
    wait_backend(srv, "three", timeout=20)
    assert three.count() > 0


def test_reload_keeps_the_addresses_while_the_name_server_is_silent(make_server, dns, backends):
    one, two, _ = backends
    dns.set(NAME, ["127.0.0.2"], ttl=60)
    srv = make_server(conf(dns.port, one.port), nports=2)
    wait_backend(srv, "two")
    # Nothing can be learnt anew: what the new config serves, it carried over.
    dns.silent.add(NAME)
    srv.reload(conf(dns.port, one.port).replace("keepalive 8;", "keepalive 4;"))
    harness.wait_until(lambda: srv.error_log_text().count("reconfiguration done") >= 1, 15, what="the reload")
    for _ in range(20):
        r = get(srv)
        assert (r.status, r.header("X-Backend")) == (200, "two"), r
    peers = api(srv, "/api/9/http/upstreams/app")["peers"]
    assert [p["server"] for p in peers] == [f"127.0.0.2:{one.port}"]
    assert peers[0]["name"] == f"{NAME}:{one.port}"


@pytest.mark.parametrize("upstream, message", [
    ("server svc.test:80 resolve;",
     'resolving names at run time requires upstream "app" in @CONF@:5 to be in shared memory'),
    ("zone app 64k; server svc.test:80 resolve;",
     'no resolver defined to resolve names at run time in upstream "app" in @CONF@:5'),
    ("zone app 64k; resolver 127.0.0.1; server svc.test resolve service=http;",
     '"service=http" is not yet supported'),
])
def test_config_errors_are_nginx_s(tmp_path, upstream, message):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf_path = prefix / "t.conf"
    conf_path.write_text(f"""events {{}}
error_log {prefix}/logs/error.log;
pid {prefix}/logs/pid;
http {{
    upstream app {{ {upstream} }}
    server {{ listen 127.0.0.1:1; location / {{ proxy_pass http://app; }} }}
}}
""")
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=prefix)
    assert r.returncode != 0
    assert message.replace("@CONF@", str(conf_path)) in r.stderr, r.stderr


def test_an_address_with_resolve_is_used_as_it_is(make_server, backends):
    one = backends[0]
    srv = make_server(harness.base_conf(f"""
    upstream app {{ server 127.0.0.1:{one.port} resolve; }}
    server {{ listen 127.0.0.1:@PORT@; location / {{ proxy_pass http://app; }} }}"""))
    r = get(srv)
    assert (r.status, r.header("X-Backend")) == (200, "one")
