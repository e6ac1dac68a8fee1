"""Variables in proxy_pass, root and alias, as nginx gives them: a
proxy_pass host that names an upstream {} uses it (no resolver needed),
`set $upstream ...; proxy_pass $upstream;`, a URI part with variables
replacing the whole URI, $proxy_host; `root` with $host (absolute and
relative to the prefix), `alias` with named and numbered regex captures,
$document_root, $realpath_root and $request_filename with variables.
Every expectation is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx."""

import os

import pytest

import harness
from echo_backend import EchoBackend


@pytest.fixture
def backend():
    b = EchoBackend("app")
    yield b.port
    b.stop()


def proxy_conf(port):
    return harness.base_conf(http=f"""
    upstream app {{ server 127.0.0.1:{port}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        location /group/ {{
            proxy_set_header X-Proxy-Host $proxy_host;
            proxy_pass http://$arg_u;
        }}
        location /set/ {{
            set $upstream http://app;
            proxy_pass $upstream;
        }}
        location /whole/ {{ proxy_pass http://$arg_h:{port}$request_uri; }}
        location /fixed/ {{ proxy_pass http://127.0.0.1:{port}/base/$arg_p; }}
        location ~ ^/re/(?<rest>.*)$ {{ proxy_pass http://app/other/$rest; }}
        location /lit/ {{
            proxy_set_header X-Proxy-Host $proxy_host;
            proxy_pass http://$arg_h:{port};
        }}
    }}
""")


def test_host_naming_an_upstream_group_uses_it(make_server, backend):
    srv = make_server(proxy_conf(backend))
    r = harness.http(srv.port, "/group/a/b?u=app")
    assert r.status == 200, r
    assert r.text() == "backend=app uri=/group/a/b?u=app host=app x-proxy-host=app\n"


def test_set_upstream_then_proxy_pass_it(make_server, backend):
    srv = make_server(proxy_conf(backend))
    r = harness.http(srv.port, "/set/x?y=1")
    assert r.status == 200, r
    assert r.text() == "backend=app uri=/set/x?y=1 host=app\n"


def test_uri_part_with_variables_replaces_the_whole_uri(make_server, backend):
    srv = make_server(proxy_conf(backend))
    r = harness.http(srv.port, "/whole/p%20q?h=127.0.0.1")
    assert r.status == 200, r
    assert r.text() == f"backend=app uri=/whole/p%20q?h=127.0.0.1 host=127.0.0.1:{backend}\n"
    # A URI part names the whole URI: the location prefix is not replaced
    # and the client's arguments are not added.
    r = harness.http(srv.port, "/fixed/ignored?p=x&z=1")
    assert r.text() == f"backend=app uri=/base/x host=127.0.0.1:{backend}\n"
    r = harness.http(srv.port, "/re/one/two?q=1")
    assert r.text() == "backend=app uri=/other/one/two host=app\n"


def test_address_literal_and_proxy_host(make_server, backend):
    srv = make_server(proxy_conf(backend))
    r = harness.http(srv.port, "/lit/z?h=127.0.0.1")
    assert r.status == 200, r
    assert r.text() == f"backend=app uri=/lit/z?h=127.0.0.1 host=127.0.0.1:{backend} x-proxy-host=127.0.0.1:{backend}\n"


def test_bad_url_from_variables_is_500(make_server, backend):
    srv = make_server(proxy_conf(backend))
    r = harness.http(srv.port, "/set/x", headers={})
    assert r.status == 200
    r = harness.http(srv.port, "/group/x?u=")
    assert r.status in (500, 502)  # nginx: "no host in upstream" (500)


def files_conf():
    return harness.base_conf(http="""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/sites/$host;
        location /info/ {
            root @PREFIX@/sites/$arg_s;
            return 200 "root=$document_root real=$realpath_root file=$request_filename\\n";
        }
        location /rel/ { root sites/$arg_s; }
        location ~ ^/img/(?<size>[a-z]+)/(.+)$ { alias @PREFIX@/sites/images/$size/$2; }
        location /al/ { alias @PREFIX@/sites/$arg_s/; }
    }
""")


def make_files(srv):
    sites = srv.prefix / "sites"
    for host in ("a.test", "b.test"):
        (sites / host / "rel").mkdir(parents=True, exist_ok=True)
        (sites / host / "index.html").write_text(f"index of {host}\n")
        (sites / host / "rel" / "f.txt").write_text(f"rel file of {host}\n")
    (sites / "images" / "small").mkdir(parents=True, exist_ok=True)
    (sites / "images" / "small" / "cat.png").write_text("small cat\n")
    if not (sites / "link").exists():
        os.symlink(sites / "a.test", sites / "link")


def test_root_with_host(make_server):
    srv = make_server(files_conf(), start=False)
    make_files(srv)
    srv.start()
    assert harness.http(srv.port, "/index.html", host="a.test").text() == "index of a.test\n"
    assert harness.http(srv.port, "/", host="b.test").text() == "index of b.test\n"
    assert harness.http(srv.port, "/index.html", host="c.test").status == 404


def test_relative_root_with_variables_is_under_the_prefix(make_server):
    srv = make_server(files_conf(), start=False)
    make_files(srv)
    srv.start()
    r = harness.http(srv.port, "/rel/f.txt?s=b.test")
    assert r.status == 200, r
    assert r.text() == "rel file of b.test\n"


def test_document_root_realpath_root_request_filename(make_server):
    srv = make_server(files_conf(), start=False)
    make_files(srv)
    srv.start()
    sites = srv.prefix / "sites"
    r = harness.http(srv.port, "/info/x.html?s=link")
    assert r.text() == f"root={sites}/link real={sites}/a.test file={sites}/link/info/x.html\n"


def test_alias_with_regex_captures(make_server):
    srv = make_server(files_conf(), start=False)
    make_files(srv)
    srv.start()
    r = harness.http(srv.port, "/img/small/cat.png")
    assert r.status == 200, r
    assert r.text() == "small cat\n"
    assert harness.http(srv.port, "/img/big/cat.png").status == 404


def test_alias_with_variables_in_a_prefix_location(make_server):
    srv = make_server(files_conf(), start=False)
    make_files(srv)
    srv.start()
    # nginx: the rendered alias takes the place of the location's prefix
    # (only a regex location's alias names the whole file).
    r = harness.http(srv.port, "/al/rel/f.txt?s=a.test")
    assert r.status == 200, r
    assert r.text() == "rel file of a.test\n"
    assert harness.http(srv.port, "/al/rel/f.txt?s=none").status == 404
    assert harness.http(srv.port, "/al/rel/f.txt?s=..").status in (403, 404)


def test_upstream_bytes_sent_and_received(make_server):
    """$upstream_bytes_sent and $upstream_bytes_received: what went over
    the upstream connection each way, head included, per try."""
    from scripted_upstream import replying
    seen = []
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Pad: " + b"p" * 100 + b"\r\n\r\nhello"

    def reply(request):
        seen.append(request)
        return answer
    up = replying(reply)
    try:
        srv = make_server(harness.base_conf(http=f"""
    log_format bytes '$upstream_bytes_sent $upstream_bytes_received';
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{up.port};
            access_log @PREFIX@/logs/bytes.log bytes;
        }}
    }}"""))
        r = harness.http(srv.port, "/x")
        assert r.status == 200 and r.body == b"hello"
        log = srv.prefix / "logs" / "bytes.log"
        harness.wait_until(lambda: log.exists() and log.read_text().strip(), 10, what="the log line")
        assert log.read_text().split() == [str(len(seen[0])), str(len(answer))]
    finally:
        up.close()
