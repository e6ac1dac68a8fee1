"""try_files and directories, as nginx: an entry written with a trailing
"/" (`$uri/`) tests for a directory and names it without that slash, so a
directory asked for without its slash gets the static module's 301 to
"dir/" (the `try_files $uri $uri/ /index.php...` of the corpus' PHP sites);
any other entry tests for a file only, so `try_files $uri /front.html`
passes a directory's URI on to the fallback (Symfony's front controller).
Every expectation is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx
(1.22)."""

import pytest

import harness


@pytest.fixture
def site(make_server):
    s = make_server(harness.base_conf(http="""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        location / { try_files $uri $uri/ /fallback.html; }
        location /front/ { try_files $uri /front/index.html; }
    }
"""), start=False)
    www = s.prefix / "www"
    for d in ("dir", "empty", "front/sub"):
        (www / d).mkdir(parents=True)
    (www / "dir" / "index.html").write_text("dir index\n")
    (www / "front" / "sub" / "index.html").write_text("sub index\n")
    (www / "front" / "index.html").write_text("front controller\n")
    (www / "file.txt").write_text("a file\n")
    (www / "fallback.html").write_text("fallback\n")
    return s.start()


def test_a_directory_without_its_slash_is_redirected(site):
    r = harness.http(site.port, "/dir")
    assert r.status == 301, r
    assert r.header("Location") == f"http://localhost:{site.port}/dir/"
    r = harness.http(site.port, "/dir?x=1")
    assert (r.status, r.header("Location")) == (301, f"http://localhost:{site.port}/dir/?x=1")
    r = harness.http(site.port, "/empty")
    assert (r.status, r.header("Location")) == (301, f"http://localhost:{site.port}/empty/")


def test_with_its_slash_the_directory_index_answers(site):
    assert harness.http(site.port, "/dir/").body == b"dir index\n"
    assert harness.http(site.port, "/file.txt").body == b"a file\n"
    assert harness.http(site.port, "/missing").body == b"fallback\n"
    assert harness.http(site.port, "/empty/").status == 403  # no index.html, no autoindex


def test_an_entry_without_a_slash_tests_for_a_file_only(site):
    for path in ("/front/sub/", "/front/sub", "/front/nothing"):
        r = harness.http(site.port, path)
        assert (r.status, r.body) == (200, b"front controller\n"), path
