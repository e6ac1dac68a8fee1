"""random_index (ngx_http_random_index_module): a URI ending in '/' in a
location with `random_index on` is answered with one of the directory's
files, picked at random, before the index files. Every expectation is
nginx's: the file passes with TORII_BIN=/usr/sbin/nginx (1.22)."""

import os

import harness


def site(make_server):
    s = make_server(harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /pics/ {{
            random_index on;
            add_header X-Args "$args";
            location /pics/nested/ {{ }}
        }}
        location /plain/ {{ }}
        location /off/ {{ random_index off; }}
    }}
""", error_level="info"), start=False)
    www = s.prefix / "www"
    for d in ["pics", "pics/sub", "pics/nested", "pics/empty", "pics/empty/dir", "plain", "off", "pics/only_index"]:
        (www / d).mkdir(parents=True, exist_ok=True)
    (www / "pics" / "a.txt").write_text("a\n")
    (www / "pics" / "b.txt").write_text("b\n")
    (www / "pics" / "c.txt").write_text("c\n")
    (www / "pics" / ".hidden").write_text("hidden\n")
    os.symlink(www / "pics" / "a.txt", www / "pics" / "link.txt")
    os.symlink(www / "pics" / "gone", www / "pics" / "dangling.txt")
    (www / "pics" / "nested" / "n1.txt").write_text("n1\n")
    (www / "pics" / "nested" / "n2.txt").write_text("n2\n")
    (www / "plain" / "p.txt").write_text("p\n")
    (www / "plain" / "index.html").write_text("plain index\n")
    (www / "off" / "o.txt").write_text("o\n")
    (www / "pics" / "only_index" / "index.html").write_text("only\n")
    s.start()
    return s


def test_each_request_gets_one_of_the_files(make_server):
    s = site(make_server)
    bodies = set()
    for _ in range(120):
        r = harness.http(s.port, "/pics/")
        assert r.status == 200, r
        bodies.add(r.text())
    # a.txt twice (itself and the link); never the hidden file, the dangling
    # link or the subdirectory.
    assert bodies == {"a\n", "b\n", "c\n"}, bodies


def test_nested_location_inherits_it(make_server):
    s = site(make_server)
    bodies = {harness.http(s.port, "/pics/nested/").text() for _ in range(60)}
    assert bodies == {"n1\n", "n2\n"}, bodies


def test_off_and_unset_locations_use_the_index(make_server):
    s = site(make_server)
    r = harness.http(s.port, "/plain/")
    assert r.status == 200 and r.text() == "plain index\n"
    assert harness.http(s.port, "/off/").status == 403


def test_a_directory_without_files_falls_back_to_the_index(make_server):
    s = site(make_server)
    assert harness.http(s.port, "/pics/empty/").status == 403
    r = harness.http(s.port, "/pics/only_index/")
    assert r.status == 200 and r.text() == "only\n"


def test_a_missing_directory_is_404_and_logged(make_server):
    s = site(make_server)
    assert harness.http(s.port, "/pics/nowhere/").status == 404
    harness.wait_until(lambda: "nowhere" in s.error_log_text(), 5, what="the error log line")


def test_arguments_are_kept(make_server):
    s = site(make_server)
    r = harness.http(s.port, "/pics/?v=2")
    assert r.status == 200 and r.text() in {"a\n", "b\n", "c\n"}
    assert r.header("X-Args") == "v=2", r.headers


def test_head_and_post_are_answered_other_methods_are_not(make_server):
    s = site(make_server)
    assert harness.http(s.port, "/pics/", method="HEAD").status == 200
    assert harness.http(s.port, "/pics/", method="DELETE").status == 405
