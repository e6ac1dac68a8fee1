"""Debian's nginx started beside the server under test on the same files,
for tests that compare responses byte for byte with nginx's. Skipped when
the server under test is nginx itself or nginx lacks the module."""

import os
import subprocess

import pytest

import harness

NGINX = "/usr/sbin/nginx"


def has_module(flag):
    if not os.path.exists(NGINX):
        return False
    out = subprocess.run([NGINX, "-V"], capture_output=True, text=True).stderr
    return flag in out


class ReferenceNginx(harness.Server):
    def command(self):
        g = "daemon off; master_process on;"
        if os.geteuid() == 0:
            g += " user root;"
        return [NGINX, "-p", str(self.prefix) + "/", "-c", str(self.conf_path), "-e", "stderr", "-g", g]


def start(conf, prefix, flag):
    """A started ReferenceNginx on `conf`, or a pytest skip."""
    if harness.IS_NGINX:
        pytest.skip("the server under test is nginx: nothing to compare with")
    if not has_module(flag):
        pytest.skip(f"{NGINX} is not built {flag}")
    return ReferenceNginx(conf, prefix).start()
