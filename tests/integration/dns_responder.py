"""A minimal DNS server on loopback UDP for the resolver tests: A records
from a table the test may change while requests flow, NXDOMAIN for names
it does not know, silence for names marked `silent` (a timeout), and a
count of the questions asked per name."""

import socket
import struct
import threading


class DnsResponder:
    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.records = {}   # name -> (list of IPv4 strings, ttl)
        self.silent = set()
        self.asked = {}     # name -> number of A questions
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def set(self, name, addrs, ttl=1):
        with self.lock:
            self.records[name.lower()] = (list(addrs), ttl)

    def questions(self, name):
        with self.lock:
            return self.asked.get(name.lower(), 0)

    def stop(self):
        self.running = False
        try:
            self.sock.sendto(b"", ("127.0.0.1", self.port))
        except OSError:
            pass
        self.thread.join(5)
        self.sock.close()

    def _serve(self):
        while self.running:
            try:
                data, peer = self.sock.recvfrom(4096)
            except OSError:
                return
            if not self.running:
                return
            reply = self._answer(data)
            if reply is not None:
                self.sock.sendto(reply, peer)

    def _answer(self, data):
        if len(data) < 12:
            return None
        ident, flags, qdcount = struct.unpack("!HHH", data[:6])
        if qdcount != 1:
            return None
        # The question: labels, then type and class.
        pos, labels = 12, []
        while pos < len(data) and data[pos] != 0:
            n = data[pos]
            labels.append(data[pos + 1:pos + 1 + n].decode("ascii", "replace"))
            pos += 1 + n
        pos += 1
        if pos + 4 > len(data):
            return None
        qtype, _qclass = struct.unpack("!HH", data[pos:pos + 4])
        question = data[12:pos + 4]
        name = ".".join(labels).lower()
        with self.lock:
            if qtype == 1:
                self.asked[name] = self.asked.get(name, 0) + 1
            if name in self.silent:
                return None
            record = self.records.get(name)
        rd = flags & 0x0100
        answers = b""
        count = 0
        if record is None:
            rcode = 3  # NXDOMAIN
        else:
            rcode = 0
            addrs, ttl = record
            if qtype == 1:
                for a in addrs:
                    answers += b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, ttl, 4) + socket.inet_aton(a)
                    count += 1
        head = struct.pack("!HHHHHH", ident, 0x8000 | 0x0400 | rd | 0x0080 | rcode, 1, count, 0, 0)
        return head + question + answers
