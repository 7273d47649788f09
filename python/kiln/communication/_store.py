"""The rendezvous key-value store that Kiln's processes meet in: served by the launcher (`python -m kiln.msrun`,
node 0) or, without it, by rank 0. Gloo's C++ client side is src/comm/tcp_store.cpp; the wire protocol is described
there. It carries only the peers' transport addresses (a few hundred bytes per process), never tensor data.

Built on the standard library's socketserver (a thread per connection), as torchrun's launcher hosts its TCPStore.
"""
import socket
import socketserver
import struct
import threading

__all__ = ["StoreServer"]


class _Handler(socketserver.BaseRequestHandler):
    def _read(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.request.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return bytes(buf)

    def handle(self):
        data, lock = self.server.data, self.server.lock
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                cmd = self._read(1)
                (klen,) = struct.unpack("<I", self._read(4))
                key = self._read(klen)
                if cmd == b"S":
                    (vlen,) = struct.unpack("<Q", self._read(8))
                    value = self._read(vlen)
                    with lock:
                        data[key] = value
                    self.request.sendall(b"\x01")
                elif cmd == b"G":
                    with lock:
                        value = data.get(key)
                    if value is None:
                        self.request.sendall(b"\x00")
                    else:
                        self.request.sendall(b"\x01" + struct.pack("<Q", len(value)) + value)
                else:
                    return  # unknown request: drop the connection (the client reports a lost store)
        except (ConnectionError, OSError):
            return


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Server6(_Server):
    address_family = socket.AF_INET6


def resolve(host, port=0):
    """(family, sockaddr) of the first address `host` resolves to (TCP). OSError when it does not resolve."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, _, _, _, sockaddr = infos[0]
    return family, sockaddr


class StoreServer:
    """A running store on (host, port); `port=0` picks a free port (see `.port`). `close()` stops it.

    Args:
        host (str): the address to listen on (a name is resolved; its first address is used). Only that address:
            "0.0.0.0" (every interface) only when named explicitly.
        port (int): the port, 0 for a free one.

    Raises:
        OSError: the address cannot be bound (for example the port is taken); the message names host and port.
    """

    def __init__(self, host, port=0):
        try:
            family, sockaddr = resolve(host, int(port))
            cls = _Server6 if family == socket.AF_INET6 else _Server
            self._server = cls(sockaddr[:2] if family == socket.AF_INET else sockaddr, _Handler)
        except OSError as e:
            raise OSError(e.errno, f"Kiln communication: cannot serve the rendezvous store on {host}:{port} "
                                   f"({e.strerror}); the host must be an address of this machine "
                                   f"(MS_SCHED_HOST / --master_addr) and the port free (MS_SCHED_PORT / "
                                   f"--master_port).") from None
        self._server.data, self._server.lock = {}, threading.Lock()
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="kiln-store", daemon=True)
        self._thread.start()

    def close(self):
        """Stops serving and closes the listening socket (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
