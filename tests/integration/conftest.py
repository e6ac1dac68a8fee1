"""Fixtures shared by the integration tests. The binary under test is
TORII_BIN (torii, or /usr/sbin/nginx to check the tests themselves)."""

import os

import pytest

import harness


def pytest_collection_modifyitems(config, items):
    if harness.BIN and os.access(harness.BIN, os.X_OK):
        return
    skip = pytest.mark.skip(reason=f"binary not found (TORII_BIN={harness.BIN!r})")
    for item in items:
        item.add_marker(skip)


def pytest_report_header(config):
    return f"binary under test: {harness.BIN} ({'nginx' if harness.IS_NGINX else 'torii'})"


@pytest.fixture
def make_server(tmp_path):
    """make_server(conf, nports=1, start=True, name=..., extra_g=...) -> Server.
    Every server made is stopped when the test ends, pass or fail."""
    servers = []
    counter = [0]

    def make(conf, nports=1, start=True, name=None, **kwargs):
        counter[0] += 1
        server = harness.Server(conf, tmp_path / (name or f"srv{counter[0]}"), nports, **kwargs)
        servers.append(server)
        if start:
            server.start()
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def nginx_only_skip():
    if harness.IS_NGINX:
        pytest.skip("checks torii-specific output")


@pytest.fixture
def upstream():
    """A ScriptedUpstream (scripted_upstream.py) for the test, stopped after
    it. A test file that wants another kind defines its own `upstream`."""
    from scripted_upstream import ScriptedUpstream
    u = ScriptedUpstream()
    yield u
    u.stop()
