"""`resolver` and `resolver_timeout`: proxy_pass with a variable host asks
a DNS server at request time (a small one run by the test on loopback,
dns_responder.py), without blocking the worker, caches the answer for its
TTL or valid=, and fails as nginx does: 502 with "no resolver defined to
resolve NAME", "NAME could not be resolved (3: Host not found)" and
"(110: Operation timed out)". Every expectation is nginx's: the file passes
with TORII_BIN=/usr/sbin/nginx."""

import time

import pytest

import harness
from dns_responder import DnsResponder
from echo_backend import EchoBackend


@pytest.fixture
def dns():
    d = DnsResponder()
    yield d
    d.stop()


@pytest.fixture
def backends():
    """Two backends on one port, at 127.0.0.1 ("one") and 127.0.0.2 ("two")."""
    one = EchoBackend("one", "127.0.0.1")
    two = EchoBackend("two", "127.0.0.2", one.port)
    yield one.port
    one.stop()
    two.stop()


def conf(dns_port, backend_port, valid=""):
    return harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        resolver 127.0.0.1:{dns_port} ipv6=off {valid};
        resolver_timeout 1s;
        location /dyn/ {{ proxy_pass http://$arg_h:{backend_port}; }}
        location /uri/ {{ proxy_pass http://$arg_h:{backend_port}/fixed$is_args$args; }}
        location /nores/ {{
            resolver_timeout 1s;
            proxy_pass http://$arg_h:{backend_port};
        }}
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        server_name localhost;
        location / {{ proxy_pass http://$arg_h:{backend_port}; }}
    }}
""")


def get(port, path):
    return harness.http(port, path)


def test_name_is_resolved_and_cached_for_its_ttl(make_server, dns, backends):
    dns.set("svc.test", ["127.0.0.1"], ttl=1)
    srv = make_server(conf(dns.port, backends), nports=2)
    r = get(srv.port, "/dyn/a?h=svc.test")
    assert r.status == 200, r
    assert r.text().startswith("backend=one uri=/dyn/a?h=svc.test host=svc.test:")
    # Within the TTL, the answer is reused: one question for many requests.
    for _ in range(10):
        assert get(srv.port, "/dyn/b?h=svc.test").text().startswith("backend=one ")
    assert dns.questions("svc.test") <= 2  # one per worker process at most
    # The name moves; requests keep flowing and reach the new address once
    # the TTL (1 s) is over.
    dns.set("svc.test", ["127.0.0.2"], ttl=1)
    seen = []

    def moved():
        r = get(srv.port, "/dyn/c?h=svc.test")
        assert r.status == 200, r
        seen.append(r.header("X-Backend"))
        return seen[-1] == "two"
    harness.wait_until(moved, 10, interval=0.05, what="the new address to be used")
    assert seen[0] == "one"


def test_valid_overrides_the_ttl(make_server, dns, backends):
    dns.set("long.test", ["127.0.0.1"], ttl=3600)
    srv = make_server(conf(dns.port, backends, valid="valid=1s"), nports=2)
    assert get(srv.port, "/dyn/?h=long.test").header("X-Backend") == "one"
    dns.set("long.test", ["127.0.0.2"], ttl=3600)
    harness.wait_until(lambda: get(srv.port, "/dyn/?h=long.test").header("X-Backend") == "two", 10,
                       interval=0.05, what="valid=1s to expire the answer")


def test_uri_part_with_variables_replaces_the_uri(make_server, dns, backends):
    dns.set("svc.test", ["127.0.0.1"])
    srv = make_server(conf(dns.port, backends), nports=2)
    r = get(srv.port, "/uri/deep/path?h=svc.test")
    assert r.status == 200, r
    assert r.text().startswith("backend=one uri=/fixed?h=svc.test ")


def test_unknown_name_is_502_host_not_found(make_server, dns, backends):
    srv = make_server(conf(dns.port, backends), nports=2)
    r = get(srv.port, "/dyn/?h=missing.test")
    assert r.status == 502
    harness.wait_until(lambda: "missing.test could not be resolved (3: Host not found)" in srv.error_log_text(),
                       5, what="the error log line")


def test_timeout_is_502_operation_timed_out(make_server, dns, backends):
    dns.silent.add("slow.test")
    srv = make_server(conf(dns.port, backends), nports=2)
    start = time.monotonic()
    r = get(srv.port, "/nores/?h=slow.test")
    assert r.status == 502
    assert time.monotonic() - start < 8  # resolver_timeout 1s, not the default 30s
    harness.wait_until(lambda: "slow.test could not be resolved (110: Operation timed out)" in srv.error_log_text(),
                       5, what="the error log line")


def test_worker_serves_others_while_a_name_resolves(make_server, dns, backends):
    dns.silent.add("slow.test")
    dns.set("svc.test", ["127.0.0.1"])
    srv = make_server(conf(dns.port, backends), nports=2)
    with harness.Conn(srv.port) as waiting:
        waiting.send(harness.build_request("GET", "/nores/?h=slow.test"))
        # While that request waits for its name, the same worker answers.
        start = time.monotonic()
        assert get(srv.port, "/dyn/?h=svc.test").status == 200
        assert time.monotonic() - start < 0.9
        assert waiting.read_response().status == 502


def test_no_resolver_is_502(make_server, dns, backends):
    dns.set("svc.test", ["127.0.0.1"])
    srv = make_server(conf(dns.port, backends), nports=2)
    r = get(srv.ports[1], "/?h=svc.test")
    assert r.status == 502
    harness.wait_until(lambda: "no resolver defined to resolve svc.test" in srv.error_log_text(), 5,
                       what="the error log line")
    assert dns.questions("svc.test") == 0


def test_address_literal_needs_no_resolver(make_server, dns, backends):
    srv = make_server(conf(dns.port, backends), nports=2)
    r = get(srv.ports[1], "/x?h=127.0.0.2")
    assert r.status == 200, r
    assert r.header("X-Backend") == "two"


@pytest.mark.parametrize("line, message", [
    pytest.param("resolver 127.0.0.1 ipv4=off ipv6=off;", '"ipv4" and "ipv6" cannot both be "off"',
                 marks=pytest.mark.skipif(harness.IS_NGINX, reason="nginx 1.22 has no ipv4=")),
    ("resolver 127.0.0.1 valid=x;", "invalid parameter: valid=x"),
    ("resolver 127.0.0.1:99999;", "invalid port"),
])
def test_bad_resolver_lines_are_refused(tmp_path, line, message):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf_path = prefix / "t.conf"
    conf_path.write_text(harness.base_conf(http=line).replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=prefix)
    assert r.returncode != 0
    assert message in (r.stdout + r.stderr)
