"""The rendezvous store's bind address and token (issue 22, item 5; docs/decisions/rendezvous-auth.md): it listens
only on the address the job names, and every connection must prove it knows the job's token (KILN_RENDEZVOUS_TOKEN)
before it may read or write a key. Jobs of 2 processes on 127.0.0.x, under the launcher and started by hand
(dist_scripts/rdzv.py), the store server against strangers in-process, and the configuration errors."""
import importlib.util
import logging
import os
import secrets
import socket
import subprocess
import sys
import threading
import time

import pytest

from helpers import subprocess_env

from kiln import communication as comm
from kiln.communication import _store

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_scripts")
LAUNCH_VARS = ("MS_WORKER_NUM", "MS_SCHED_HOST", "MS_SCHED_PORT", "MS_NODE_ID", "RANK_ID", "MS_ROLE",
               "MS_LOCAL_WORKER", "LOCAL_RANK", "KILN_STORE_HOSTED", "KILN_RENDEZVOUS_TOKEN", "KILN_COMM_TIMEOUT")

_spec = importlib.util.spec_from_file_location("rdzv_client", os.path.join(SCRIPTS, "rdzv_client.py"))
rc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rc)


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def clean_env(**extra):
    env = subprocess_env([SCRIPTS])
    for v in LAUNCH_VARS:
        env.pop(v, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def by_hand(script_args, tokens, host="127.0.0.1", timeout_s=60, code=None):
    """Starts 2 processes by hand (MindSpore's variables, no launcher) running dist_scripts/rdzv.py (or `code` with
    python -c); tokens: one per rank (None: unset). Returns the Popen objects."""
    port = free_port()
    procs = []
    for rank, token in enumerate(tokens):
        extra = dict(MS_WORKER_NUM=2, MS_SCHED_HOST=host, MS_SCHED_PORT=port, MS_NODE_ID=rank,
                     KILN_COMM_TIMEOUT=timeout_s)
        if token is not None:
            extra["KILN_RENDEZVOUS_TOKEN"] = token
        cmd = ([sys.executable, "-c", code] if code else
               [sys.executable, "-m", "kiln.compat", os.path.join(SCRIPTS, "rdzv.py"), *script_args])
        procs.append(subprocess.Popen(cmd, env=clean_env(**extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    return procs


def finish(procs, timeout=120):
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        outs.append((p.returncode, out, err))
    return outs


def show(outs):
    return "\n".join(f"--- rank {i} status {rc_}\n{out}\n{err}" for i, (rc_, out, err) in enumerate(outs))


def peer_of(out, word):
    line = next(l for l in out.splitlines() if l.startswith(word + " "))
    return line.split()[1]


# ---------------------------------------------------------------- jobs of 2 processes

def test_msrun_job_generated_token_named_address_strangers_refused(tmp_path):
    """Under the launcher with --master_addr=127.0.0.2: the workers get a generated 64-hex-digit token; the store
    listens on 127.0.0.2 only (127.0.0.3 refused); a stranger and a wrong token are refused, and the launcher logs
    each refusal naming the peer's address; a new group and all-reduces still give the right values."""
    cmd = [sys.executable, "-m", "kiln.msrun", "--worker_num=2", "--local_worker_num=2", "--master_addr=127.0.0.2",
           f"--master_port={free_port('127.0.0.2')}", f"--log_dir={tmp_path / 'logs'}", "--join",
           os.path.join(SCRIPTS, "rdzv.py"), "msrun"]
    r = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=120)
    logs = "\n".join(p.read_text() for p in sorted((tmp_path / "logs").glob("*.log")))
    assert r.returncode == 0, r.stdout + r.stderr + logs
    assert "[rank 0] RDZV OK 0" in r.stdout and "[rank 1] RDZV OK 1" in r.stdout
    for word in ("STRANGER", "WRONG"):
        peer = peer_of(logs, word)
        assert f"refused the connection from {peer}: wrong token" in r.stderr, r.stderr
    assert "Kiln rendezvous store on 127.0.0.2:" in r.stderr


def test_by_hand_job_with_token(tmp_path):
    """Started by hand with the same KILN_RENDEZVOUS_TOKEN: rank 0's store listens on MS_SCHED_HOST=127.0.0.1 only
    (not 0.0.0.0: 127.0.0.2 is refused), strangers are refused and logged by rank 0, the job completes."""
    token = secrets.token_hex(32)
    outs = finish(by_hand(["hand"], [token, token]))
    assert all(o[0] == 0 for o in outs), show(outs)
    assert "RDZV OK 0" in outs[0][1] and "RDZV OK 1" in outs[1][1], show(outs)
    for word in ("STRANGER", "WRONG"):
        peer = peer_of(outs[0][1], word)
        assert f"refused the connection from {peer}: wrong token" in outs[0][2], show(outs)
    assert "KILN_RENDEZVOUS_TOKEN is not set" not in outs[0][2] + outs[1][2]


def test_by_hand_loopback_job_without_token_warns(tmp_path):
    """By hand on 127.0.0.1 without KILN_RENDEZVOUS_TOKEN: allowed (the store is on loopback only), with a warning on
    every process that any process of this machine may join; strangers are still refused (they do not speak the
    handshake)."""
    outs = finish(by_hand(["hand"], [None, None]))
    assert all(o[0] == 0 for o in outs), show(outs)
    for _, _, err in outs:
        assert "KILN_RENDEZVOUS_TOKEN is not set: the rendezvous store on 127.0.0.1 accepts any process" in err, \
            show(outs)


def test_by_hand_wrong_token_is_refused(tmp_path):
    """Rank 1 with another token than rank 0's store: its init fails at once with a RuntimeError naming
    KILN_RENDEZVOUS_TOKEN, and rank 0 logs the refusal (rank 0 then waits for rank 1 until its timeout)."""
    code = "from kiln.communication import init; init(); print('JOINED', flush=True)"
    procs = by_hand([], [secrets.token_hex(32), secrets.token_hex(32)], timeout_s=20, code=code)
    try:
        out1, err1 = procs[1].communicate(timeout=60)
        # rank 0's store logged the refusal before answering it (stderr is line-buffered): rank 0 can stop now
    finally:
        procs[0].kill()
        out0, err0 = procs[0].communicate()
    assert procs[1].returncode != 0 and "JOINED" not in out1, out1 + err1
    assert "RuntimeError: Kiln communication: the rendezvous store at 127.0.0.1:" in err1, err1
    assert "refused this process: its token differs" in err1 and "KILN_RENDEZVOUS_TOKEN" in err1, err1
    assert "refused the connection from 127.0.0.1:" in err0 and "wrong token" in err0, err0


# ---------------------------------------------------------------- the store server in this process

@pytest.fixture
def server():
    token = secrets.token_hex(32)
    s = _store.StoreServer("127.0.0.1", 0, token, handshake_timeout=1.0)
    yield s, token
    s.close()


def test_store_listens_only_on_the_named_address(server):
    s, _ = server
    assert rc.listening_addresses(s.port) == ["127.0.0.1"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", s.port), timeout=5)


def test_store_refuses_strangers_and_logs_them(server, caplog):
    s, token = server
    caplog.set_level(logging.WARNING, logger="kiln.communication")
    got, me = rc.stranger("127.0.0.1", s.port)
    assert got[:8] == rc.MAGIC and got[40:] == b"\x00"
    got, me2 = rc.wrong_token("127.0.0.1", s.port)
    assert got == b"\x00"
    deadline = time.monotonic() + 5
    while len(caplog.records) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    text = caplog.text
    assert f"refused the connection from {me}: wrong token" in text, text
    assert f"refused the connection from {me2}: wrong token" in text, text
    assert s.keys() == []  # the stranger's 'S' request wrote nothing
    c = rc.Client("127.0.0.1", s.port, token)
    c.set(b"k", b"v")
    assert c.get(b"k") == b"v" and c.get(b"poison") is None
    c.close()
    assert s.keys() == [b"k"]


def test_silent_connection_does_not_block_the_store(caplog):
    """A connection that never answers the challenge is closed after the handshake timeout (and logged); meanwhile
    the job's clients are served."""
    token = secrets.token_hex(32)
    s = _store.StoreServer("127.0.0.1", 0, token, handshake_timeout=3.0)
    try:
        caplog.set_level(logging.WARNING, logger="kiln.communication")
        silent = socket.create_connection(("127.0.0.1", s.port), timeout=20)
        me = "%s:%d" % silent.getsockname()[:2]
        t0 = time.monotonic()
        c = rc.Client("127.0.0.1", s.port, token)  # served while the silent one waits
        c.set(b"a", b"1")
        assert c.get(b"a") == b"1"
        served = time.monotonic() - t0
        assert served < 2.9, served
        assert rc._read_all(silent)[:8] == rc.MAGIC  # the challenge, then the server closes it after 3 s
        waited = time.monotonic() - t0
        assert 2.9 <= waited < 15, waited
        silent.close()
        deadline = time.monotonic() + 5
        while "no answer" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"refused the connection from {me}: no answer to the token challenge within 3 s" in caplog.text
        assert c.get(b"a") == b"1" and s.keys() == [b"a"]
        c.close()
    finally:
        s.close()


def _dribble(sock, every, stop, limit):
    """Sends one byte of a handshake answer every `every` seconds (at most `limit` bytes) until `stop` is set or
    the connection fails."""
    for _ in range(limit):
        if stop.wait(every):
            return
        try:
            sock.sendall(b"x")
        except OSError:
            return


def _closed_after(sock, t0, limit):
    """Seconds from t0 until the server closes `sock` (reads until EOF or a reset), or None after `limit` s."""
    sock.settimeout(0.2)
    while time.monotonic() - t0 < limit:
        try:
            if not sock.recv(4096):
                return time.monotonic() - t0
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - t0
    return None


def test_dribbling_client_is_closed_at_the_handshake_deadline(caplog):
    """The handshake limit is one deadline for the whole handshake, not a timeout per recv: a connection that sends
    one byte of its 64-byte answer every 1.5 s (each recv well within the 3 s limit) is still closed 3 s after it
    was accepted, and logged; meanwhile the job's real clients are served."""
    token = secrets.token_hex(32)
    s = _store.StoreServer("127.0.0.1", 0, token, handshake_timeout=3.0)
    stop = threading.Event()
    try:
        caplog.set_level(logging.WARNING, logger="kiln.communication")
        t0 = time.monotonic()
        slow = socket.create_connection(("127.0.0.1", s.port), timeout=20)
        me = "%s:%d" % slow.getsockname()[:2]
        threading.Thread(target=_dribble, args=(slow, 1.5, stop, 64), daemon=True).start()
        c = rc.Client("127.0.0.1", s.port, token)  # served while the slow one dribbles
        c.set(b"a", b"1")
        assert c.get(b"a") == b"1"
        closed = _closed_after(slow, t0, limit=12)  # per-recv timeouts would keep it open 64 x 1.5 s = 96 s
        assert closed is not None and 2.9 <= closed < 4.5, closed
        stop.set()
        slow.close()
        deadline = time.monotonic() + 5
        while "no answer" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"refused the connection from {me}: no answer to the token challenge within 3 s" in caplog.text
        assert s.keys() == [b"a"]
        c2 = rc.Client("127.0.0.1", s.port, token)  # a real client after the refusal: still served
        assert c2.get(b"a") == b"1"
        c.close()
        c2.close()
    finally:
        stop.set()
        s.close()


def test_burst_of_connections_is_accepted_without_stalls():
    """The listen backlog is at least 128 (socketserver's default of 5 dropped the SYNs of a burst: a burst of 50
    connections took 8 s, every 6th connect waiting ~1 s for the kernel's SYN retry), so 50 connections opened at
    once all connect at once, and a real client right after them is served at once."""
    token = secrets.token_hex(32)
    s = _store.StoreServer("127.0.0.1", 0, token, handshake_timeout=5.0)
    socks = []
    try:
        t0 = time.monotonic()
        worst = 0.0
        for _ in range(50):
            t = time.monotonic()
            socks.append(socket.create_connection(("127.0.0.1", s.port), timeout=10))
            worst = max(worst, time.monotonic() - t)
        burst = time.monotonic() - t0
        assert worst < 0.9 and burst < 3.0, (worst, burst)  # a dropped SYN is retried after 1 s
        t = time.monotonic()
        c = rc.Client("127.0.0.1", s.port, token)
        c.set(b"k", b"v")
        assert c.get(b"k") == b"v" and time.monotonic() - t < 0.9
        c.close()
        assert _store.LISTEN_BACKLOG >= 128
    finally:
        for x in socks:
            x.close()
        s.close()


def test_store_server_arguments():
    with pytest.raises(ValueError, match="not a loopback address.*KILN_RENDEZVOUS_TOKEN"):
        _store.StoreServer("0.0.0.0", 0, "")
    with pytest.raises(OSError, match="cannot serve the rendezvous store on 192.0.2.1:.*address of this machine"):
        _store.StoreServer("192.0.2.1", 0, "x" * 32)  # TEST-NET-1: not this machine's
    assert _store.is_loopback("127.0.0.1") and _store.is_loopback("localhost") and _store.is_loopback("127.0.0.2")
    assert not _store.is_loopback("0.0.0.0") and not _store.is_loopback("192.0.2.1")


# ---------------------------------------------------------------- the client (C++) against a fake store

def _fake_store(behaviour):
    """A one-connection server on 127.0.0.1: 'impostor' opens the handshake but cannot prove the token; 'mute'
    accepts and says nothing; 'dribble' sends its challenge a byte every 1.5 s. Returns (port, thread)."""
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen()

    def run():
        conn, _ = lst.accept()
        with conn:
            if behaviour == "dribble":  # the challenge, one byte every 1.5 s (at most 8: then silence)
                for b in (rc.MAGIC + os.urandom(32))[:8]:
                    time.sleep(1.5)
                    try:
                        conn.sendall(bytes([b]))
                    except OSError:
                        break
            if behaviour == "impostor":
                conn.sendall(rc.MAGIC + os.urandom(32))
                rc_read = b""
                while len(rc_read) < 64:
                    rc_read += conn.recv(64 - len(rc_read))
                conn.sendall(b"\x01" + os.urandom(32))
            conn.settimeout(10)
            try:
                conn.recv(1)
            except OSError:
                pass
        lst.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return lst.getsockname()[1], t


@pytest.fixture
def no_launcher(monkeypatch):
    for v in LAUNCH_VARS:
        monkeypatch.delenv(v, raising=False)
    yield monkeypatch
    comm.release()


def _as_rank1(monkeypatch, host, port, token=None, timeout="3"):
    for k, v in dict(MS_WORKER_NUM="2", MS_SCHED_HOST=host, MS_SCHED_PORT=str(port), MS_NODE_ID="1",
                     KILN_COMM_TIMEOUT=timeout).items():
        monkeypatch.setenv(k, v)
    if token is not None:
        monkeypatch.setenv("KILN_RENDEZVOUS_TOKEN", token)


def test_client_refuses_a_store_that_cannot_prove_the_token(no_launcher):
    port, t = _fake_store("impostor")
    _as_rank1(no_launcher, "127.0.0.1", port, token=secrets.token_hex(32))
    with pytest.raises(RuntimeError, match="is not this job's rendezvous store.*KILN_RENDEZVOUS_TOKEN"):
        comm.init()
    assert not comm.GlobalComm.INITED
    t.join(15)


def test_client_times_out_on_a_mute_server(no_launcher):
    port, t = _fake_store("mute")
    _as_rank1(no_launcher, "127.0.0.1", port, token=secrets.token_hex(32), timeout="2")
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="did not open the rendezvous handshake"):
        comm.init()
    assert time.monotonic() - t0 < 30
    t.join(15)


def test_client_handshake_has_one_deadline(no_launcher):
    """The C++ client's handshake has one deadline too (KILN_COMM_TIMEOUT, at most 10 s), not a timeout per recv: a
    server that sends its challenge a byte every 1.5 s (each recv within the 3 s timeout) is given up on at ~3 s."""
    port, t = _fake_store("dribble")
    _as_rank1(no_launcher, "127.0.0.1", port, token=secrets.token_hex(32), timeout="3")
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="did not open the rendezvous handshake"):
        comm.init()
    took = time.monotonic() - t0
    assert 2.9 <= took < 5.5, took  # per-recv timeouts: 8 bytes x 1.5 s, then 3 s of silence = 15 s
    assert not comm.GlobalComm.INITED
    t.join(15)


# ---------------------------------------------------------------- configuration errors

def test_token_required_when_the_store_is_reachable_from_other_machines(no_launcher):
    _as_rank1(no_launcher, "192.0.2.1", 1234, timeout="1")
    with pytest.raises(RuntimeError, match="KILN_RENDEZVOUS_TOKEN is not set.*MS_SCHED_HOST='192.0.2.1'.*"
                                           "secrets.token_hex"):
        comm.init()
    no_launcher.setenv("KILN_RENDEZVOUS_TOKEN", "short")
    with pytest.raises(RuntimeError, match="KILN_RENDEZVOUS_TOKEN must be a secret of at least 16 characters.*got 5"):
        comm.init()
    assert not comm.GlobalComm.INITED


def test_launcher_token_errors(tmp_path, capsys, monkeypatch):
    from kiln.msrun import main
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    monkeypatch.delenv("KILN_RENDEZVOUS_TOKEN", raising=False)
    # several nodes: every launcher needs the same token, which no launcher can make alone
    with pytest.raises(SystemExit) as e:
        main(["--worker_num=2", "--local_worker_num=1", "--master_addr=192.0.2.1", "--node_rank=1",
              f"--log_dir={tmp_path}", str(script)])
    assert e.value.code == 2 and "several nodes" in capsys.readouterr().err
    monkeypatch.setenv("KILN_RENDEZVOUS_TOKEN", "short")
    with pytest.raises(SystemExit) as e:
        main(["--worker_num=1", "--local_worker_num=1", f"--log_dir={tmp_path}", str(script)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "KILN_RENDEZVOUS_TOKEN must be a secret of at least 16 characters" in err, err
    # node 0 of several nodes on a loopback address: the other nodes could not reach its store
    monkeypatch.setenv("KILN_RENDEZVOUS_TOKEN", secrets.token_hex(32))
    with pytest.raises(SystemExit) as e:
        main(["--worker_num=2", "--local_worker_num=1", "--master_addr=127.0.0.1", f"--log_dir={tmp_path}",
              str(script)])
    assert e.value.code == 2 and "loopback address" in capsys.readouterr().err
