"""The rendezvous key-value store that Kiln's processes meet in: served by the launcher (`python -m kiln.msrun`,
node 0) or, without it, by rank 0. Gloo's C++ client side is src/comm/tcp_store.cpp; the wire protocol is described
there. It carries only the peers' transport addresses (a few hundred bytes per process), never tensor data.

Built on the standard library's socketserver (a thread per connection), as torchrun's launcher hosts its TCPStore.

Authentication (docs/decisions/rendezvous-auth.md): the server listens only on the address the job names, and every
connection opens with a mutual HMAC-SHA256 challenge-response on the job's token (KILN_RENDEZVOUS_TOKEN). A
connection that does not answer the challenge correctly within HANDSHAKE_TIMEOUT seconds in all (one deadline for
the whole handshake, however its bytes are spaced) is closed and logged (a warning naming the peer's address on the
logger 'kiln.communication') before any request is read: it cannot write a key, read one, or hold up another client
(each connection has its own thread).
"""
import hashlib
import hmac
import ipaddress
import logging
import secrets
import socket
import socketserver
import struct
import threading
import time

__all__ = ["StoreServer", "TOKEN_VAR", "MIN_TOKEN_LEN", "HANDSHAKE_TIMEOUT", "LISTEN_BACKLOG", "check_token", "is_loopback",
           "resolve", "client_proof", "server_proof"]

_logger = logging.getLogger("kiln.communication")

TOKEN_VAR = "KILN_RENDEZVOUS_TOKEN"
MIN_TOKEN_LEN = 16
HANDSHAKE_TIMEOUT = 10.0  # seconds a new connection has, in all, to complete the handshake (one deadline)
LISTEN_BACKLOG = 128      # at least this many connections may wait to be accepted (SOMAXCONN when larger)
MAGIC = b"KILNRDZ1"       # the server's first bytes: protocol name and version
NONCE = 32
MAC = 32


def _mac(token, label, sn, cn):
    return hmac.new(token.encode(), label + b"\0" + sn + cn, hashlib.sha256).digest()


def client_proof(token, server_nonce, client_nonce):
    """HMAC-SHA256(token, "kiln-rdzv-client" 0x00 server_nonce client_nonce): what a client answers."""
    return _mac(token, b"kiln-rdzv-client", server_nonce, client_nonce)


def server_proof(token, server_nonce, client_nonce):
    """HMAC-SHA256(token, "kiln-rdzv-server" 0x00 server_nonce client_nonce): what the server answers back."""
    return _mac(token, b"kiln-rdzv-server", server_nonce, client_nonce)


def check_token(token, where):
    """The token as given, or ValueError naming `where` (the variable or flag) and the expected form."""
    if not isinstance(token, str) or len(token) < MIN_TOKEN_LEN:
        got = f"{len(token)} characters" if isinstance(token, str) else type(token).__name__
        raise ValueError(f"{where} must be a secret of at least {MIN_TOKEN_LEN} characters, the same on every "
                         f"process of the job (make one with `python -c \"import secrets; "
                         f"print(secrets.token_hex(32))\"`), but got {got}.")
    return token


def resolve(host, port=0):
    """(family, sockaddr) of the first address `host` resolves to (TCP). OSError when it does not resolve."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, _, _, _, sockaddr = infos[0]
    return family, sockaddr


def is_loopback(host):
    """True when every address `host` resolves to is a loopback address (127.0.0.0/8, ::1): the job cannot leave
    this machine. False for a wildcard, another address, or a name that does not resolve."""
    try:
        addrs = {info[4][0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except OSError:
        return False
    return bool(addrs) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs)


class _Handler(socketserver.BaseRequestHandler):
    def _read(self, n, deadline=None):
        """Exactly n bytes. With `deadline` (time.monotonic()), the socket's timeout is set to the time left before
        each recv, so the whole read ends by then (socket.timeout), however the peer spaces its bytes."""
        buf = bytearray()
        while len(buf) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout("handshake deadline passed")
                self.request.settimeout(left)
            chunk = self.request.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return bytes(buf)

    def _peer(self):
        a = self.client_address
        return f"[{a[0]}]:{a[1]}" if ":" in str(a[0]) else f"{a[0]}:{a[1]}"

    def _refuse(self, why):
        _logger.warning("Kiln rendezvous store on %s: refused the connection from %s: %s.", self.server.where,
                        self._peer(), why)

    def _authenticate(self):
        """The handshake (see src/comm/tcp_store.cpp); True when the peer proved it knows the token. Reads exactly
        64 bytes; the whole handshake has one deadline, handshake_timeout seconds after the connection was accepted
        (not a timeout per recv: a peer sending a byte now and then is still closed at the deadline)."""
        token = self.server.token
        sock = self.request
        deadline = self.accepted + self.server.handshake_timeout
        sn = secrets.token_bytes(NONCE)
        try:
            sock.settimeout(max(deadline - time.monotonic(), 1e-3))
            sock.sendall(MAGIC + sn)
            reply = self._read(NONCE + MAC, deadline)
        except socket.timeout:
            self._refuse(f"no answer to the token challenge within {self.server.handshake_timeout:g} s")
            return False
        except (ConnectionError, OSError):
            self._refuse("it closed the connection during the token challenge")
            return False
        cn, mac = reply[:NONCE], reply[NONCE:]
        if not hmac.compare_digest(mac, client_proof(token, sn, cn)):
            self._refuse(f"wrong token (its answer to the challenge does not match {TOKEN_VAR})")
            try:
                sock.sendall(b"\x00")
            except OSError:
                pass
            return False
        try:
            sock.settimeout(max(deadline - time.monotonic(), 1e-3))
            sock.sendall(b"\x01" + server_proof(token, sn, cn))
        except OSError:
            return False
        sock.settimeout(None)  # authenticated: requests may be far apart (create_group long after init)
        return True

    def setup(self):
        self.accepted = time.monotonic()  # the handshake's deadline counts from here

    def handle(self):
        data, lock = self.server.data, self.server.lock
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self._authenticate():
            return  # socketserver closes the connection
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
    # listen() backlog: socketserver's default is 5, and connections beyond the accept queue have their SYN dropped
    # and retried a second later (a burst of 50 connections took 8 s). The kernel caps it at net.core.somaxconn.
    request_queue_size = max(LISTEN_BACKLOG, getattr(socket, "SOMAXCONN", 0))


class _Server6(_Server):
    address_family = socket.AF_INET6


class StoreServer:
    """A running store on (host, port); `port=0` picks a free port (see `.port`). `close()` stops it.

    Args:
        host (str): the address to listen on (a name is resolved; its first address is used). Only that address:
            "0.0.0.0" (every interface) only when named explicitly.
        port (int): the port, 0 for a free one.
        token (str): the job's token; every connection must prove it knows it. "" is allowed only for a loopback
            host (see management.init: a job by hand on 127.0.0.1 without KILN_RENDEZVOUS_TOKEN).
        handshake_timeout (float): seconds a new connection has, in all, to answer the challenge: one deadline from
            the moment it is accepted, not a limit per read.

    Raises:
        OSError: the address cannot be bound (for example the port is taken); the message names host and port.
        ValueError: an empty token for a host that is not loopback.
    """

    def __init__(self, host, port=0, token="", handshake_timeout=HANDSHAKE_TIMEOUT):
        if not isinstance(token, str):
            raise TypeError(f"StoreServer: token must be a str, but got {type(token).__name__}.")
        if not token and not is_loopback(host):
            raise ValueError(f"Kiln communication: the rendezvous store on {host} (not a loopback address) needs the "
                             f"job's token ({TOKEN_VAR}).")
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
        self._server.token = token
        self._server.handshake_timeout = float(handshake_timeout)
        self.host = self._server.server_address[0]
        self.port = self._server.server_address[1]
        self._server.where = f"{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="kiln-store", daemon=True)
        self._thread.start()

    def keys(self):
        """The keys stored so far (bytes), for tests and diagnostics."""
        with self._server.lock:
            return list(self._server.data)

    def close(self):
        """Stops serving and closes the listening socket (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
