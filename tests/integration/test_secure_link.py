"""secure_link, secure_link_md5 and secure_link_secret as nginx's
secure_link module: $secure_link is "1" for a link whose base64url MD5
matches, "0" once its expiry time has passed, empty otherwise;
$secure_link_expires; the older /prefix/MD5HEX/link form. Also runs
against nginx (TORII_BIN=/usr/sbin/nginx)."""

import base64
import hashlib
import time

import pytest

import harness

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        location /s/ {
            secure_link $arg_md5,$arg_expires;
            secure_link_md5 "$secure_link_expires$uri$remote_addr secret";
            if ($secure_link = "") { return 403; }
            if ($secure_link = "0") { return 410; }
            return 200 "ok $secure_link $secure_link_expires";
        }
        location /plain/ {
            secure_link $arg_md5;
            secure_link_md5 "$uri secret";
            return 200 "[$secure_link][$secure_link_expires]";
        }
        location /old/ {
            secure_link_secret s3cret;
            if ($secure_link = "") { return 403; }
            return 200 "link=$secure_link";
        }
        location /none/ {
            return 200 "[$secure_link]";
        }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = harness.Server(harness.base_conf(CONF), tmp_path_factory.mktemp("securelink"))
    server.start()
    yield server
    server.stop()


def token(text):
    return base64.urlsafe_b64encode(hashlib.md5(text.encode()).digest()).rstrip(b"=").decode()


def get(srv, path):
    r = harness.http(srv.port, path)
    return r.status, r.text()


def test_valid_link_with_expiry(srv):
    expires = int(time.time()) + 3600
    md5 = token(f"{expires}/s/file.bin127.0.0.1 secret")
    assert get(srv, f"/s/file.bin?md5={md5}&expires={expires}") == (200, f"ok 1 {expires}")


def test_expired_link(srv):
    expires = int(time.time()) - 10
    md5 = token(f"{expires}/s/file.bin127.0.0.1 secret")
    assert get(srv, f"/s/file.bin?md5={md5}&expires={expires}")[0] == 410


@pytest.mark.parametrize("query", [
    "",                                        # no hash at all
    "md5=AAAAAAAAAAAAAAAAAAAAAA&expires=9999999999",   # 16 bytes, wrong
    "md5=!!!!&expires=9999999999",             # not base64url
    "md5=AAAA&expires=9999999999",             # too short once decoded
])
def test_refused(srv, query):
    assert get(srv, f"/s/file.bin?{query}")[0] == 403


def test_hash_for_another_uri_or_a_bad_expiry(srv):
    expires = int(time.time()) + 3600
    md5 = token(f"{expires}/s/other.bin127.0.0.1 secret")
    assert get(srv, f"/s/file.bin?md5={md5}&expires={expires}")[0] == 403
    md5 = token("abc/s/file.bin127.0.0.1 secret")
    assert get(srv, f"/s/file.bin?md5={md5}&expires=abc")[0] == 403


def test_without_expiry(srv):
    md5 = token("/plain/x secret")
    assert get(srv, f"/plain/x?md5={md5}") == (200, "[1][]")
    assert get(srv, f"/plain/x?md5={md5}x") == (200, "[][]")
    # Padding is allowed and ends the hash.
    assert get(srv, f"/plain/x?md5={md5}==") == (200, "[1][]")


def test_secret_form(srv):
    link = "dir/file.txt"
    digest = hashlib.md5((link + "s3cret").encode()).hexdigest()
    assert get(srv, f"/old/{digest}/{link}") == (200, f"link={link}")
    assert get(srv, f"/old/{digest.upper()}/{link}") == (200, f"link={link}")
    assert get(srv, f"/old/{digest}/other.txt")[0] == 403
    assert get(srv, f"/old/{digest[:-1]}/{link}")[0] == 403
    assert get(srv, f"/old/{digest}/")[0] == 403


def test_no_settings_no_value(srv):
    assert get(srv, "/none/") == (200, "[]")


def test_secret_mixed_with_md5_is_an_error(tmp_path):
    conf = harness.base_conf(http="""
    server { listen 127.0.0.1:1; location / { secure_link_secret x; secure_link_md5 "$uri"; } }
""")
    (tmp_path / "logs").mkdir()
    path = tmp_path / "bad.conf"
    path.write_text(conf.replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(path)], prefix=tmp_path)
    assert r.returncode != 0
    assert "cannot be mixed" in r.stdout + r.stderr
