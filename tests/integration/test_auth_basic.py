"""auth_basic with htpasswd files made by the usual tools: openssl passwd
(-1, -5, -6, -apr1), htpasswd (bcrypt, {SHA}), Python's crypt, {PLAIN}.
Every expectation is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx."""

import base64
import hashlib
import re
import subprocess
import warnings

import pytest

import harness
from harness import http

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;

        location /private/ {
            auth_basic "Members only";
            auth_basic_user_file @PREFIX@/htpasswd;
            location /private/open/ { auth_basic off; }
        }
        location /paged/ {
            auth_basic "Paged";
            auth_basic_user_file @PREFIX@/htpasswd;
            error_page 401 /401.html;
        }
        location /relative/ {
            auth_basic "rel";
            auth_basic_user_file rel/htpasswd;
        }
        location /realm-var/ {
            auth_basic "realm of $host";
            auth_basic_user_file @PREFIX@/htpasswd;
        }
        location /missing/ {
            auth_basic "x";
            auth_basic_user_file @PREFIX@/no-such-file;
        }
        location /any/ {
            satisfy any;
            allow 127.0.0.1;
            deny all;
            auth_basic "any";
            auth_basic_user_file @PREFIX@/htpasswd;
        }
        location /any-denied/ {
            satisfy any;
            deny all;
            auth_basic "any";
            auth_basic_user_file @PREFIX@/htpasswd;
        }
        location /all-denied/ {
            deny all;
            auth_basic "all";
            auth_basic_user_file @PREFIX@/htpasswd;
        }
    }
"""

PASSWORD = "s3cret pass"


def openssl_passwd(flag, password):
    return subprocess.run(["openssl", "passwd", flag, password], check=True, capture_output=True,
                          text=True).stdout.strip()


def htpasswd(flag, user, password):
    out = subprocess.run(["htpasswd", "-nb" + flag, user, password], check=True, capture_output=True,
                         text=True).stdout.strip()
    return out.split(":", 1)[1]


def users():
    u = {
        "u_md5": openssl_passwd("-1", PASSWORD),
        "u_sha256": openssl_passwd("-5", PASSWORD),
        "u_sha512": openssl_passwd("-6", PASSWORD),
        "u_apr1": openssl_passwd("-apr1", PASSWORD),
        "u_bcrypt": htpasswd("B", "u_bcrypt", PASSWORD),
        "u_sha": htpasswd("s", "u_sha", PASSWORD),
        "u_plain": "{PLAIN}" + PASSWORD,
        "u_ssha": "{SSHA}" + base64.b64encode(hashlib.sha1(PASSWORD.encode() + b"salt1234").digest()
                                               + b"salt1234").decode(),
        "u_pycrypt": crypt.crypt(PASSWORD, crypt.mksalt(crypt.METHOD_SHA512)),
    }
    assert u["u_bcrypt"].startswith("$2y$"), u["u_bcrypt"]
    assert u["u_sha"].startswith("{SHA}"), u["u_sha"]
    return u


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def srv(make_server):
    s = make_server(harness.base_conf(CONF, error_level="info"), start=False)
    lines = ["# a comment line", ""] + [f"{k}:{v}" for k, v in users().items()] + ["withcomment:{PLAIN}pw:a comment"]
    lines += ["badssha:{SSHA}_____wQadOA1e+/f+T+H3eCQQhRzYWx0", "shortssha:{SSHA}Zm9vCg=="]  # malformed hashes
    (s.prefix / "htpasswd").write_text("\n".join(lines) + "\n")
    (s.conf_path.parent / "rel").mkdir()
    (s.conf_path.parent / "rel" / "htpasswd").write_text("rel:{PLAIN}relpw\n")
    for d in ("paged", "private", "private/open", "relative", "realm-var", "missing", "any", "any-denied", "all-denied"):
        (s.prefix / "www" / d).mkdir(parents=True, exist_ok=True)
        (s.prefix / "www" / d / "index.html").write_text("secret\n")
    (s.prefix / "www" / "401.html").write_text("who are you?\n")
    s.start()
    return s


@pytest.mark.parametrize("user", ["u_md5", "u_sha256", "u_sha512", "u_apr1", "u_bcrypt", "u_sha", "u_plain",
                                  "u_ssha", "u_pycrypt"])
def test_each_hash_scheme_accepts_its_password(srv, user):
    r = http(srv.port, "/private/", headers=basic(user, PASSWORD))
    assert r.status == 200, (r, srv.error_log_text())
    assert r.body == b"secret\n"
    # Again: the second time may come from the remembered verification.
    assert http(srv.port, "/private/", headers=basic(user, PASSWORD)).status == 200
    r = http(srv.port, "/private/", headers=basic(user, PASSWORD + "x"))
    assert r.status == 401
    assert r.header("WWW-Authenticate") == 'Basic realm="Members only"'
    assert f'user "{user}": password mismatch' in srv.error_log_text()


def test_no_credentials_is_401_with_the_realm(srv):
    r = http(srv.port, "/private/")
    assert r.status == 401
    assert r.header("WWW-Authenticate") == 'Basic realm="Members only"'
    assert "no user/password was provided for basic authentication" in srv.error_log_text()
    for bad in ("Bearer abc", "Basic !!!!", "Basic " + base64.b64encode(b"nocolon").decode(),
                "Basic " + base64.b64encode(b":emptyuser").decode()):
        r = http(srv.port, "/private/", headers={"Authorization": bad})
        assert r.status == 401, bad


def test_a_custom_401_page_keeps_the_challenge(srv):
    # Else the browser would show the page and never ask for credentials.
    r = http(srv.port, "/paged/")
    assert r.status == 401 and r.body == b"who are you?\n", r
    assert r.header("WWW-Authenticate") == 'Basic realm="Paged"'


def test_unknown_user(srv):
    r = http(srv.port, "/private/", headers=basic("nobody", "x"))
    assert r.status == 401
    assert re.search(r'\[error\] .*user "nobody" was not found in ".*/htpasswd", client: 127\.0\.0\.1',
                     srv.error_log_text())


@pytest.mark.parametrize("user", ["badssha", "shortssha"])
def test_a_malformed_hash_matches_nothing(srv, user):
    r = http(srv.port, "/private/", headers=basic(user, "1"))
    assert r.status == 401 and r.header("WWW-Authenticate") == 'Basic realm="Members only"'


def test_the_hash_ends_at_a_colon(srv):
    assert http(srv.port, "/private/", headers=basic("withcomment", "pw")).status == 200


def test_off_in_a_nested_location_and_variables_in_the_realm(srv):
    assert http(srv.port, "/private/open/").status == 200
    r = http(srv.port, "/realm-var/", host="example.org")
    assert r.status == 401
    assert r.header("WWW-Authenticate") == 'Basic realm="realm of example.org"'


def test_relative_file_is_next_to_the_config(srv):
    assert http(srv.port, "/relative/", headers=basic("rel", "relpw")).status == 200


def test_missing_file_is_403(srv):
    r = http(srv.port, "/missing/", headers=basic("u_plain", PASSWORD))
    assert r.status == 403
    assert re.search(r'\[error\] .*no-such-file', srv.error_log_text())


def test_satisfy(srv):
    # any: the address rule lets 127.0.0.1 in without credentials.
    assert http(srv.port, "/any/").status == 200
    # any, address denied: the password still lets in.
    r = http(srv.port, "/any-denied/")
    assert r.status == 401 and r.header("WWW-Authenticate") == 'Basic realm="any"'
    assert http(srv.port, "/any-denied/", headers=basic("u_plain", PASSWORD)).status == 200
    # all (the default): deny wins before the password is asked.
    assert http(srv.port, "/all-denied/", headers=basic("u_plain", PASSWORD)).status == 403
