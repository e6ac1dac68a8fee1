"""The admin API (admin_listen, admin_token_file, api, state FILE): an
upstream's servers change while torii runs, shaped like NGINX Plus's REST
API version 9. A server added through the API takes traffic without a
reload, a drained one takes no new request while the one it is serving
finishes, changes persist through `state FILE`, and bad requests get the
right status."""

import http.client
import json
import threading

import pytest

import harness
from slow_backend import Backend

pytestmark = pytest.mark.skipif(harness.IS_NGINX, reason="the admin API is NGINX Plus's, not open-source nginx's")

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def backends():
    made = []

    def make(name):
        b = Backend(name)
        made.append(b)
        return b
    yield make
    for b in made:
        b.close()


def conf(upstream_body, tmp_path, extra_http=""):
    token_file = tmp_path / "admin.token"
    token_file.write_text(TOKEN + "\n")
    return harness.base_conf(f"""
    admin_listen 127.0.0.1:@PORT1@;
    admin_token_file {token_file};
    upstream app {{
        {upstream_body}
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://app; }}
    }}
    {extra_http}""", main="worker_processes 2;", access_log=False)


def api(server, method, path, body=None, token=TOKEN, raw=None, port_index=1):
    conn = http.client.HTTPConnection("127.0.0.1", server.ports[port_index], timeout=10)
    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else (json.dumps(body) if body is not None else None)
    if data is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    text = r.read().decode()
    conn.close()
    doc = json.loads(text) if text and r.getheader("Content-Type") == "application/json" else None
    return r.status, doc, r


def get(server, path="/"):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    return r.status, body


def test_added_server_receives_traffic_without_reload(make_server, backends, tmp_path):
    a = backends("a")
    b = backends("b")
    server = make_server(conf(f"server 127.0.0.1:{a.port};", tmp_path), nports=2)
    assert {get(server)[1] for _ in range(6)} == {"a"}

    status, doc, _ = api(server, "POST", "/api/9/http/upstreams/app/servers", {"server": f"127.0.0.1:{b.port}"})
    assert status == 201, doc
    assert doc["server"] == f"127.0.0.1:{b.port}" and doc["id"] == 1 and doc["weight"] == 1

    # Both workers serve from the new list at their next request: round
    # robin over two servers gives b every other request of each worker.
    answers = [get(server) for _ in range(20)]
    assert all(s == 200 for s, _ in answers)
    assert b.count() >= 8, answers
    assert a.count() >= 8 + 6
    assert "reconfiguring" not in server.error_log_text() and "reload" not in server.error_log_text()

    status, doc, _ = api(server, "GET", "/api/9/http/upstreams/app/servers")
    assert status == 200 and [s["server"] for s in doc] == [f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"]
    status, doc, _ = api(server, "GET", "/api/9/http/upstreams")
    peers = doc["app"]["peers"]
    assert [p["state"] for p in peers] == ["up", "up"]
    assert peers[1]["requests"] == b.count() and peers[1]["responses"]["2xx"] == b.count()

    # Deleted: no more traffic, the list says so.
    status, doc, _ = api(server, "DELETE", "/api/9/http/upstreams/app/servers/1")
    assert status == 200 and [s["id"] for s in doc] == [0]
    before = b.count()
    assert {get(server)[1] for _ in range(8)} == {"a"}
    assert b.count() == before


def test_drained_server_takes_no_new_requests_and_its_request_in_flight_completes(make_server, backends, tmp_path):
    a = backends("a")
    b = backends("b")
    server = make_server(conf(f"server 127.0.0.1:{a.port};\n server 127.0.0.1:{b.port};", tmp_path), nports=2)
    # Only b for now, so the slow request lands there.
    assert api(server, "PATCH", "/api/9/http/upstreams/app/servers/0", {"down": True})[0] == 200
    slow = {}
    t = threading.Thread(target=lambda: slow.update(r=get(server, "/slow")))
    t.start()
    assert b.slow_started.wait(10)

    assert api(server, "PATCH", "/api/9/http/upstreams/app/servers/0", {"down": False})[0] == 200
    status, doc, _ = api(server, "PATCH", "/api/9/http/upstreams/app/servers/1", {"drain": True})
    assert status == 200 and doc["drain"] is True
    _, doc, _ = api(server, "GET", "/api/9/http/upstreams/app")
    assert [p["state"] for p in doc["peers"]] == ["up", "draining"]
    assert doc["peers"][1]["active"] == 1

    before = b.count()
    answers = [get(server) for _ in range(12)]
    assert answers == [(200, "a")] * 12
    assert b.count() == before

    b.release_slow.set()
    t.join(20)
    assert slow["r"] == (200, "b")
    _, doc, _ = api(server, "GET", "/api/9/http/upstreams/app")
    assert doc["peers"][1]["active"] == 0


def test_token_is_required_and_checked(make_server, backends, tmp_path):
    a = backends("a")
    server = make_server(conf(f"server 127.0.0.1:{a.port};", tmp_path), nports=2)
    status, doc, r = api(server, "GET", "/api/9/http/upstreams", token=None)
    assert status == 401 and r.getheader("WWW-Authenticate").startswith("Bearer")
    status, doc, _ = api(server, "GET", "/api/9/http/upstreams", token="wrong")
    assert status == 403 and doc["error"]["status"] == 403
    status, doc, _ = api(server, "POST", "/api/9/http/upstreams/app/servers", {"server": "127.0.0.1:1"}, token="wrong")
    assert status == 403
    assert api(server, "GET", "/api/9/http/upstreams/app/servers")[1] == [
        {"id": 0, "server": f"127.0.0.1:{a.port}", "weight": 1, "max_conns": 0, "max_fails": 1,
         "fail_timeout": "10s", "slow_start": "0s", "route": "", "backup": False, "down": False, "drain": False}]
    # The API is not on the proxy's port.
    assert get(server, "/api/9/http/upstreams") == (200, "a")


@pytest.mark.parametrize("method,path,raw,status,code", [
    ("POST", "/api/9/http/upstreams/app/servers", "{\"server\": ", 400, "JsonError"),
    ("POST", "/api/9/http/upstreams/app/servers", "{\"server\": \"127.0.0.1:9\",}", 400, "JsonError"),
    ("POST", "/api/9/http/upstreams/app/servers", "[1]", 400, "UpstreamConfFormatError"),
    ("POST", "/api/9/http/upstreams/app/servers", "", 400, "JsonError"),
    ("POST", "/api/9/http/upstreams/app/servers", "{\"weight\": 2}", 400, "UpstreamConfFormatError"),
    ("POST", "/api/9/http/upstreams/app/servers", "{\"server\": \"127.0.0.1:9\", \"colour\": 1}", 400,
     "UpstreamConfFormatError"),
    ("POST", "/api/9/http/upstreams/app/servers", "{\"server\": \"127.0.0.1:99999\"}", 400,
     "UpstreamConfFormatError"),
    ("PATCH", "/api/9/http/upstreams/app/servers/0", "{\"weight\": 0}", 400, "UpstreamConfFormatError"),
    ("PATCH", "/api/9/http/upstreams/app/servers/0", "{\"down\": \"yes\"}", 400, "UpstreamConfFormatError"),
    ("PATCH", "/api/9/http/upstreams/app/servers/7", "{\"down\": true}", 404, "UpstreamServerNotFound"),
    ("DELETE", "/api/9/http/upstreams/app/servers/7", None, 404, "UpstreamServerNotFound"),
    ("GET", "/api/9/http/upstreams/nope", None, 404, "UpstreamNotFound"),
    ("GET", "/api/8/http/upstreams", None, 404, "UnknownVersion"),
    ("PUT", "/api/9/http/upstreams/app/servers/0", "{}", 405, "MethodNotSupported"),
])
def test_bad_requests_get_a_clear_status(make_server, backends, tmp_path, method, path, raw, status, code):
    a = backends("a")
    server = make_server(conf(f"server 127.0.0.1:{a.port};", tmp_path), nports=2)
    got, doc, _ = api(server, method, path, raw=raw)
    assert (got, doc["error"]["code"]) == (status, code), doc
    # Nothing changed.
    assert len(api(server, "GET", "/api/9/http/upstreams/app/servers")[1]) == 1
    assert get(server) == (200, "a")


def test_read_only_api_location_refuses_writes(make_server, backends, tmp_path):
    a = backends("a")
    server = make_server(conf(f"server 127.0.0.1:{a.port};", tmp_path, extra_http="""
    server {
        listen 127.0.0.1:@PORT2@;
        location /api { api; }
    }"""), nports=3)
    status, doc, _ = api(server, "GET", "/api/9/http/upstreams/app/servers", port_index=2)
    assert status == 200 and len(doc) == 1
    status, doc, _ = api(server, "POST", "/api/9/http/upstreams/app/servers", {"server": "127.0.0.1:9"}, port_index=2)
    assert status == 405 and doc["error"]["code"] == "MethodDisabled"


def test_changes_persist_in_the_state_file_and_are_lost_on_reload_without_one(make_server, backends, tmp_path):
    a = backends("a")
    b = backends("b")
    state = tmp_path / "app.state"
    state.write_text(f"server 127.0.0.1:{a.port};\n")
    server = make_server(conf(f"state {state};", tmp_path, extra_http=f"""
    upstream other {{ server 127.0.0.1:{a.port}; }}"""), nports=2)
    assert api(server, "POST", "/api/9/http/upstreams/app/servers",
               {"server": f"127.0.0.1:{b.port}", "weight": 3, "fail_timeout": "5s"})[0] == 201
    assert api(server, "POST", "/api/9/http/upstreams/other/servers", {"server": f"127.0.0.1:{b.port}"})[0] == 201
    lines = state.read_text().splitlines()
    assert lines[1] == f"server 127.0.0.1:{b.port} weight=3 max_fails=1 fail_timeout=5000ms max_conns=0;", lines

    server.reload()
    harness.wait_until(lambda: len(api(server, "GET", "/api/9/http/upstreams/other/servers")[1]) == 1, 10,
                       what="reload")
    doc = api(server, "GET", "/api/9/http/upstreams/app/servers")[1]
    assert [(s["server"], s["weight"]) for s in doc] == [(f"127.0.0.1:{a.port}", 1), (f"127.0.0.1:{b.port}", 3)]
    answers = [get(server)[1] for _ in range(16)]
    assert answers.count("b") >= 8, answers


def test_admin_listen_needs_a_token_file(tmp_path):
    (tmp_path / "logs").mkdir()
    conf_path = tmp_path / "t.conf"
    conf_path.write_text(harness.base_conf("admin_listen 127.0.0.1:9901;").replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=str(tmp_path))
    assert r.returncode != 0
    assert "\"admin_listen\" needs \"admin_token_file\"" in r.stdout + r.stderr


def test_state_and_server_lines_conflict(tmp_path):
    (tmp_path / "logs").mkdir()
    conf_path = tmp_path / "t.conf"
    conf_path.write_text(harness.base_conf(f"""
    upstream app {{ state {tmp_path}/s.state; server 127.0.0.1:9; }}
    server {{ listen 127.0.0.1:1; location / {{ proxy_pass http://app; api; }} }}""").replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=str(tmp_path))
    assert r.returncode != 0
    assert "conflicts with \"state\"" in r.stdout + r.stderr


def test_added_server_is_probed_by_the_health_check(make_server, backends, tmp_path):
    a = backends("a")
    dead = harness.PortLease()  # nothing listens there
    try:
        server = make_server(conf(f"""server 127.0.0.1:{a.port};
            health_check interval=100ms fails=1 passes=1 uri=/health timeout=1s;""", tmp_path), nports=2)
        status, doc, _ = api(server, "POST", "/api/9/http/upstreams/app/servers", {"server": f"127.0.0.1:{dead.port}"})
        assert status == 201

        def states():
            return [p["state"] for p in api(server, "GET", "/api/9/http/upstreams/app")[1]["peers"]]
        harness.wait_until(lambda: states() == ["up", "unhealthy"], 10, what="the new server probed")
        assert harness.wait_until(lambda: a.count("/health") >= 2, 10, what="the old server still probed")
        assert [get(server) for _ in range(6)] == [(200, "a")] * 6
        assert f"upstream server 127.0.0.1:{dead.port} of \"app\" is unhealthy" in server.error_log_text()
    finally:
        dead.release()


def test_metrics_show_the_servers_as_the_api_left_them_with_their_counters(make_server, backends, tmp_path):
    import shutil
    import subprocess
    from test_metrics import value
    a = backends("a")
    b = backends("b")
    server = make_server(conf(f"server 127.0.0.1:{a.port};", tmp_path, extra_http="""
    server {
        listen 127.0.0.1:@PORT2@;
        location = /metrics { metrics; }
    }"""), nports=3)
    assert api(server, "POST", "/api/9/http/upstreams/app/servers", {"server": f"127.0.0.1:{b.port}"})[0] == 201
    for _ in range(10):
        assert get(server)[0] == 200
    assert api(server, "PATCH", "/api/9/http/upstreams/app/servers/1", {"drain": True})[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", server.ports[2], timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    sa, sb = f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"
    assert value(text, "torii_upstream_server_requests_total", upstream="app", server=sa) == a.count()
    assert value(text, "torii_upstream_server_requests_total", upstream="app", server=sb) == b.count() > 0
    assert value(text, "torii_upstream_server_responses_total", upstream="app", server=sb, status="2xx") == b.count()
    assert value(text, "torii_upstream_server_state", upstream="app", server=sb, state="draining") == 1
    assert value(text, "torii_upstream_server_state", upstream="app", server=sa, state="up") == 1
    assert value(text, "torii_upstream_server_up", upstream="app", server=sb) == 0
    assert value(text, "torii_connections", state="writing") >= 1  # the scrape itself
    assert value(text, "torii_connections_accepted_total") >= 12
    promtool = shutil.which("promtool")
    if promtool:
        r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
