"""A client of Kiln's rendezvous store written in Python, for the tests of its authentication (the real client is
src/comm/tcp_store.cpp): connect(), a stranger's raw request, a wrong token, the store's listening addresses."""
import os
import socket
import struct

MAGIC = b"KILNRDZ1"


def _read_all(sock, limit=4096):
    """Everything the server sends until it closes the connection (or `limit` bytes)."""
    out = b""
    while len(out) < limit:
        try:
            chunk = sock.recv(limit - len(out))
        except ConnectionResetError:  # closed with our unread request in its buffer: a reset, after its bytes
            break
        if not chunk:
            break
        out += chunk
    return out


def stranger(host, port, timeout=30):
    """A client without the token that speaks the store's request protocol right away: a 'S' request writing the
    key b'poison' (more than the 64 bytes of a handshake answer). Returns (bytes received until the server closed,
    the client's own 'host:port')."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        me = "%s:%d" % s.getsockname()[:2]
        key, value = b"poison", b"x" * 100
        s.sendall(b"S" + struct.pack("<I", len(key)) + key + struct.pack("<Q", len(value)) + value)
        return _read_all(s), me


def handshake(sock, token):
    """Answers the server's challenge with `token` on a connected socket; returns (server nonce, client nonce)."""
    from kiln.communication._store import client_proof
    hello = b""
    while len(hello) < 40:
        chunk = sock.recv(40 - len(hello))
        if not chunk:
            raise ConnectionError("closed before the challenge")
        hello += chunk
    assert hello[:8] == MAGIC, hello
    cn = os.urandom(32)
    sock.sendall(cn + client_proof(token, hello[8:], cn))
    return hello[8:], cn


def wrong_token(host, port, timeout=30):
    """A client that answers the challenge with a wrong token: returns (what followed its answer, its 'host:port')."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        me = "%s:%d" % s.getsockname()[:2]
        handshake(s, "not-the-job-token-0123456789")
        return _read_all(s), me


class Client:
    """An authenticated client (the job's token): get(key) -> bytes or None, set(key, value)."""

    def __init__(self, host, port, token, timeout=30):
        from kiln.communication._store import server_proof
        self.sock = socket.create_connection((host, port), timeout=timeout)
        sn, cn = handshake(self.sock, token)
        verdict = self._read(1)
        if verdict != b"\x01" or self._read(32) != server_proof(token, sn, cn):
            raise ConnectionError(f"refused ({verdict!r}) or a wrong proof from the server")

    def _read(self, n):
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed")
            out += chunk
        return out

    def set(self, key, value):
        self.sock.sendall(b"S" + struct.pack("<I", len(key)) + key + struct.pack("<Q", len(value)) + value)
        assert self._read(1) == b"\x01"

    def get(self, key):
        self.sock.sendall(b"G" + struct.pack("<I", len(key)) + key)
        if self._read(1) == b"\x00":
            return None
        (n,) = struct.unpack("<Q", self._read(8))
        return self._read(n)

    def close(self):
        self.sock.close()


def listening_addresses(port):
    """The local addresses of the sockets listening on TCP `port` in this network namespace (/proc/net/tcp{,6})."""
    out = []
    for path, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            with open(path) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, p = fields[1].split(":")
            if fields[3] != "0A" or int(p, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(addr)
            if v6:  # four 32-bit words, each in host (little-endian) order
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                out.append(socket.inet_ntop(socket.AF_INET6, raw))
            else:
                out.append(socket.inet_ntoa(raw[::-1]))
    return out
