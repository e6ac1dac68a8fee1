"""TCP peers for the stream tests: an echo server (optionally greeting with
its name, and sending a trailer once the client's FIN arrives, to see a
half-close passed on), a server that accepts and stays silent, a port
nothing listens on, and a listener whose accept queue is full (a connect
to it hangs: SYNs are dropped), for connect timeouts. TcpServer, a
listener that runs a handler per connection, is also what the raw HTTP
upstreams (scripted_upstream, bad_upstream) stand on."""

import socket
import threading

import harness


class TcpServer:
    def __init__(self, handler, addr="127.0.0.1"):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((addr, 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.handler = handler
        self.accepted = 0
        self.conns = []
        self.closed = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn):
        try:
            self.handler(conn)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    @property
    def connections(self):
        """Connections accepted so far (the HTTP upstreams' word for it)."""
        return self.accepted

    def stop(self):
        self.close()

    def close(self):
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


def echo(name=None, trailer=None):
    """Echoes every byte; greets with "NAME\\n" first when named; after the
    client's FIN, sends `trailer` and closes."""
    def handler(conn):
        if name:
            conn.sendall(f"{name}\n".encode())
        while True:
            data = conn.recv(65536)
            if not data:
                break
            conn.sendall(data)
        if trailer:
            conn.sendall(trailer)
    return TcpServer(handler)


def silent():
    """Accepts and never sends; reads until the peer goes away."""
    def handler(conn):
        while conn.recv(65536):
            pass
    return TcpServer(handler)


class DeadPort:
    """A leased port with nothing listening: connect() is refused."""

    def __init__(self):
        self.lease = harness.PortLease()
        self.port = self.lease.port

    def close(self):
        self.lease.release()


class BlackHole:
    """A listener with a full accept queue: further SYNs are dropped, so a
    connect to it waits until the connector's timeout."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.fillers = []
        # The queue of a backlog-0 listener holds one connection; a few more
        # make sure it is full whatever the kernel counts.
        for _ in range(3):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self.fillers.append(s)

    def close(self):
        for s in self.fillers:
            s.close()
        self.sock.close()


class UdpServer:
    """A UDP peer on 127.0.0.1: `answer(data)` gives the datagrams to send
    back to the sender (none: silent). Counts what it got."""

    def __init__(self, answer):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        self.received = []
        self.closed = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.closed:
            try:
                data, addr = self.sock.recvfrom(65536)
            except OSError:
                return
            self.received.append((data, addr))
            for reply in self.answer(data) or []:
                try:
                    self.sock.sendto(reply, addr)
                except OSError:
                    pass

    def close(self):
        self.closed = True
        self.sock.close()


def udp_echo(name=None):
    """Answers each datagram with itself, or with b"NAME:" + it when named."""
    prefix = f"{name}:".encode() if name else b""
    return UdpServer(lambda data: [prefix + data])


def udp_dns(name):
    """A DNS-like server: a query's first two bytes (its id) come back in
    one answer that names the server."""
    return UdpServer(lambda data: [data[:2] + b" answer from " + name.encode() + b" to " + data[2:]])


def udp_silent():
    """Takes datagrams, never answers."""
    return UdpServer(lambda data: None)


class UdpDeadPort:
    """A UDP port nothing is bound to: a datagram sent there draws an ICMP
    port unreachable (ECONNREFUSED on a connected socket)."""

    def __init__(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()

    def close(self):
        pass
