"""Raw HTTP/3 for tests: frames and QPACK field sections built by hand
(literal fields only, no dynamic table), sent by build/h3raw, a QUIC
client that writes whatever bytes it is given on the streams a script
names. See tools/h3raw/h3raw.cc for the script language and its output."""

import os
import subprocess
import threading

import harness

BIN = os.environ.get("TORII_H3RAW_BIN") or os.path.join(os.path.dirname(harness.BIN), "h3raw")
AVAILABLE = os.path.exists(BIN)

# Frame types (RFC 9114 7.2) and stream types (6.2).
DATA, HEADERS, SETTINGS, GOAWAY = 0x0, 0x1, 0x4, 0x7
CONTROL, QPACK_ENCODER, QPACK_DECODER = 0x0, 0x2, 0x3
# Settings.
QPACK_MAX_TABLE_CAPACITY, MAX_FIELD_SECTION_SIZE = 0x1, 0x6

H3_NO_ERROR = 0x100
H3_STREAM_CREATION_ERROR = 0x103
H3_CLOSED_CRITICAL_STREAM = 0x104
H3_FRAME_UNEXPECTED = 0x105
H3_EXCESSIVE_LOAD = 0x107
H3_MISSING_SETTINGS = 0x10a
H3_REQUEST_REJECTED = 0x10b
H3_REQUEST_CANCELLED = 0x10c
H3_MESSAGE_ERROR = 0x10e
QPACK_DECOMPRESSION_FAILED = 0x200
QPACK_ENCODER_STREAM_ERROR = 0x201


def varint(n):
    if n < 0x40:
        return bytes([n])
    if n < 0x4000:
        return (0x4000 | n).to_bytes(2, "big")
    if n < 0x40000000:
        return (0x80000000 | n).to_bytes(4, "big")
    return (0xC000000000000000 | n).to_bytes(8, "big")


def frame(ftype, payload=b""):
    return varint(ftype) + varint(len(payload)) + payload


def settings(**values):
    ids = {"qpack_max_table_capacity": QPACK_MAX_TABLE_CAPACITY, "max_field_section_size": MAX_FIELD_SECTION_SIZE}
    return frame(SETTINGS, b"".join(varint(ids[k]) + varint(v) for k, v in values.items()))


def control_stream(**values):
    """A client control stream: its type, then SETTINGS."""
    return varint(CONTROL) + settings(**values)


def _prefixed_int(first, prefix_bits, n):
    """QPACK/HPACK integer with an N-bit prefix (RFC 7541 5.1)."""
    limit = (1 << prefix_bits) - 1
    if n < limit:
        return bytes([first | n])
    out = bytearray([first | limit])
    n -= limit
    while n >= 128:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field_section(fields):
    """A QPACK field section of literal field lines with literal names
    (RFC 9204 4.5.6), no Huffman, no table references."""
    out = bytearray(b"\x00\x00")  # Required Insert Count 0, Base 0
    for name, value in fields:
        name, value = name.encode("latin-1"), value.encode("latin-1")
        out += _prefixed_int(0x20, 3, len(name)) + name
        out += _prefixed_int(0x00, 7, len(value)) + value
    return bytes(out)


def request_fields(path="/", method="GET", authority="a.test", extra=()):
    return [(":method", method), (":scheme", "https"), (":authority", authority), (":path", path), *extra]


def headers(fields):
    return frame(HEADERS, field_section(fields))


def request(path="/", method="GET", authority="a.test", extra=()):
    return headers(request_fields(path, method, authority, extra))


def hx(data):
    return data.hex()


def run(port, script, timeout=30, sni="a.test"):
    """Runs h3raw against 127.0.0.1:port with `script` (lines); returns its
    output lines."""
    text = "\n".join(script) + "\n"
    r = subprocess.run([BIN, "127.0.0.1", str(port), sni], input=text.encode(), capture_output=True,
                       timeout=timeout)
    return (r.stdout.decode("latin-1") + r.stderr.decode("latin-1")).splitlines()


def status(lines, stream):
    for line in lines:
        if line.startswith(f"header {stream} :status: "):
            return int(line.split(": ", 1)[1])
    return None


def closed_with(lines):
    """The CONNECTION_CLOSE the server sent: ("app"|"transport", code), or None."""
    for line in lines:
        if line.startswith("close "):
            parts = line.split()
            return parts[1], int(parts[2], 16)
    return None


def resets(lines, stream):
    return [int(line.split()[2], 16) for line in lines if line.startswith(f"reset {stream} ")]


class Live:
    """h3raw fed a line at a time, for scripts that wait on something
    outside the connection (an upstream, a signal) between steps."""

    def __init__(self, port, sni="a.test"):
        self.proc = subprocess.Popen([BIN, "127.0.0.1", str(port), sni], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.append(raw.decode("latin-1").rstrip("\n"))

    def send(self, *lines):
        self.proc.stdin.write(("\n".join(lines) + "\n").encode())
        self.proc.stdin.flush()

    def wait_for(self, prefix, timeout=10):
        harness.wait_until(lambda: any(line.startswith(prefix) for line in self.lines), timeout, what=prefix)

    def finish(self, timeout=30):
        self.proc.stdin.close()
        self.proc.wait(timeout=timeout)
        self.reader.join()
        return self.lines
