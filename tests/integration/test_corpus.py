"""Real nginx configs from public projects (tests/corpus/, each with its
origin and what was changed in its header or ORIGIN file) checked with
`-t`. Each entry's `# expect:` line says what happens: `pass`, or a
failure naming the directive torii refuses (a module another issue still
has open: proxy_cache, ssl_stapling), so the test stays true as those land: when one does, the
test fails until its line changes to `pass`. With TORII_BIN=/usr/sbin/nginx every entry passes
(nginx-light 1.22 has every module they use)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import harness

CORPUS = Path(harness.SOURCE_DIR) / "tests" / "corpus"
MIME_TYPES = Path(harness.SOURCE_DIR) / "conf" / "mime.types"
# What nginx's conf directory holds beside nginx.conf and configs include
# by relative name (fastcgi_params, from nginx's own conf/).
SUPPORT = CORPUS / "support"


def entries():
    out = []
    for p in sorted(CORPUS.iterdir()):
        if p == SUPPORT:
            continue
        if p.is_dir() and (p / "ORIGIN").exists():
            out.append(p)
        elif p.suffix == ".conf":
            out.append(p)
    return out


def header(path):
    """The `# key: value` lines at the top of an entry (its ORIGIN file
    for a directory)."""
    text = (path / "ORIGIN" if path.is_dir() else path).read_text()
    fields = {}
    for line in text.splitlines():
        m = re.match(r"#\s*(origin|context|changed|expect):\s*(.*)", line)
        if m and m.group(1) not in fields:
            fields[m.group(1)] = m.group(2).strip()
    fields["context"] = fields.get("context", "").split(" ")[0]
    return fields


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus-tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=example.com", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True)
    subprocess.run(["openssl", "dhparam", "-dsaparam", "-out", str(d / "dh.pem"), "2048"],
                   check=True, capture_output=True)
    return d


def fill(text, prefix, tls):
    return (text.replace("@PREFIX@", str(prefix)).replace("@CERT@", str(tls / "cert.pem"))
            .replace("@KEY@", str(tls / "key.pem")).replace("@DHPARAM@", str(tls / "dh.pem")))


def install(entry, prefix, tls):
    """The entry as a config under `prefix`; returns the main file."""
    (prefix / "logs").mkdir(parents=True)
    for f in SUPPORT.iterdir():
        shutil.copy(f, prefix / f.name)
    if entry.is_dir():
        for src in entry.rglob("*"):
            if src.is_file() and src.name != "ORIGIN":
                dst = prefix / src.relative_to(entry)
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(fill(src.read_text(), prefix, tls))
        return prefix / "nginx.conf"
    text = fill(entry.read_text(), prefix, tls)
    main = prefix / "nginx.conf"
    if header(entry).get("context") == "http":
        shutil.copy(MIME_TYPES, prefix / "mime.types")
        text = (f"pid {prefix}/logs/nginx.pid;\nerror_log {prefix}/logs/error.log;\nevents {{}}\n"
                f"http {{\n    include mime.types;\n{text}\n}}\n")
    else:
        shutil.copy(MIME_TYPES, prefix / "mime.types")
    main.write_text(text)
    return main


ENTRIES = entries()


def test_corpus_is_large_enough_and_documented():
    assert len(ENTRIES) >= 47
    for e in ENTRIES:
        h = header(e)
        assert h.get("origin", "").startswith("https://"), e
        assert h.get("context") in ("http", "main"), e
        assert "changed" in h, e
        assert "expect" in h, e


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_config_checks_as_recorded(entry, tmp_path, tls_files):
    main = install(entry, tmp_path / "p", tls_files)
    r = harness.cli(["-t", "-c", str(main)], prefix=tmp_path / "p")
    out = r.stdout + r.stderr
    expect = header(entry)["expect"]
    if harness.IS_NGINX or expect == "pass":
        assert r.returncode == 0, out
        return
    m = re.fullmatch(r"fails on (\S+) .*", expect)
    assert m, f"bad expect line: {expect!r}"
    assert r.returncode != 0, f"{entry.name} now passes: change its expect line to pass\n{out}"
    assert f'"{m.group(1)}' in out, out
