"""A scripted gRPC upstream over h2c (the python3-h2 library), for what a
real gRPC server does only by chance: a PING while a connection is idle, a
refused stream or a GOAWAY below the stream of a call. Each accepted
connection is a record with the stream ids it carried and the PING
acknowledgements it got; `script(conn_index, call_index)` says how a call
ends: "ok" (a gRPC reply echoing the message), "refuse" (RST_STREAM
REFUSED_STREAM) or "goaway" (GOAWAY whose last stream is below the call's)."""

import socket
import threading

import h2.config
import h2.connection
import h2.events
import h2.exceptions

REFUSED_STREAM = 7


def grpc_message(payload):
    return b"\x00" + len(payload).to_bytes(4, "big") + payload


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.lock = threading.Lock()
        self.streams = []
        self.ping_acks = 0
        self.closed = False

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)


class H2GrpcUpstream:
    def __init__(self, script=lambda conn, call: "ok"):
        self.script = script
        self.connections = []
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._stop:
            try:
                s, _ = self._listener.accept()
            except OSError:
                return
            c = Connection(s)
            with self._lock:
                self.connections.append(c)
                index = len(self.connections) - 1
            threading.Thread(target=self._serve, args=(c, index), daemon=True).start()

    def _serve(self, c, index):
        bodies = {}
        with c.lock:
            c.h2.initiate_connection()
            c.flush()
        try:
            while True:
                data = c.sock.recv(65536)
                if not data:
                    break
                with c.lock:
                    for ev in c.h2.receive_data(data):
                        self._event(c, index, ev, bodies)
                    c.flush()
        except (OSError, h2.exceptions.ProtocolError):
            pass
        finally:
            c.closed = True
            c.sock.close()

    def _event(self, c, index, ev, bodies):
        if isinstance(ev, h2.events.RequestReceived):
            bodies[ev.stream_id] = b""
            c.streams.append(ev.stream_id)
        elif isinstance(ev, h2.events.DataReceived):
            bodies[ev.stream_id] = bodies.get(ev.stream_id, b"") + ev.data
            c.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.PingAckReceived):
            c.ping_acks += 1
        elif isinstance(ev, h2.events.StreamEnded):
            sid = ev.stream_id
            action = self.script(index, c.streams.index(sid))
            if action == "refuse":
                c.h2.reset_stream(sid, error_code=REFUSED_STREAM)
            elif action == "goaway":
                c.h2.close_connection(error_code=0, last_stream_id=sid - 2)
            else:
                c.h2.send_headers(sid, [(":status", "200"), ("content-type", "application/grpc")])
                c.h2.send_data(sid, grpc_message(b"h2:" + bodies.pop(sid, b"")[5:]))
                c.h2.send_headers(sid, [("grpc-status", "0")], end_stream=True)

    def ping(self, index):
        """A PING on connection `index`, sent while the proxy holds it idle."""
        c = self.connections[index]
        with c.lock:
            c.h2.ping(b"idle-png")
            c.flush()

    def stop(self):
        self._stop = True
        self._listener.close()
        for c in list(self.connections):
            try:
                c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
