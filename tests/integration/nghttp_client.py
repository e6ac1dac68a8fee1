"""nghttp (nghttp2's client) run by the HTTP/2 tests, and the frames its
verbose output shows."""

import re
import subprocess


def verbose(url, timeout=20):
    """`nghttp -v URL`: what it printed (frames, fields, then the body)."""
    return subprocess.run(["nghttp", "-v", url], capture_output=True, text=True, timeout=timeout).stdout


def header_blocks(nghttp_out):
    """The header blocks nghttp -v received, in order: nghttp prints each
    field ("recv (stream_id=N) name: value") before its HEADERS frame line."""
    blocks, fields = [], []
    for line in nghttp_out.splitlines():
        m = re.search(r"recv \(stream_id=\d+\) (.*)$", line)
        if m:
            fields.append(m.group(1))
        elif "recv HEADERS frame" in line:
            blocks.append(fields)
            fields = []
    return blocks
