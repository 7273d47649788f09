"""kiln.msrun — MindSpore's `msrun` launcher for Kiln: starts this node's worker processes of a data-parallel job.

    python -m kiln.msrun --worker_num=N --local_worker_num=M [--master_addr=HOST] [--master_port=PORT]
                         [--node_rank=R] [--log_dir=DIR] [--join] [--cluster_time_out=S] script.py [args ...]

On each of the job's nodes, run it once with that node's --node_rank (0 … nodes-1) and the same --worker_num,
--master_addr (node 0's address) and --master_port. Node 0's launcher serves the rendezvous store on master_port;
the workers of node R get the world ranks R·M … R·M+M-1. Each worker runs `script.py args` as `python -m
kiln.compat` does (so `import mindspore` works) with MindSpore's msrun variables (MS_WORKER_NUM, MS_LOCAL_WORKER,
MS_SCHED_HOST, MS_SCHED_PORT, MS_ROLE=MS_WORKER, MS_NODE_ID/RANK_ID, RANK_SIZE, LOCAL_RANK), its output written to
DIR/worker_<rank>.log (and, with --join, also shown here prefixed by its rank).

The launcher watches its workers: when one fails (non-zero exit, or killed by a signal) it stops the others
(SIGTERM, then SIGKILL after 5 s, each worker's whole process group), prints the failing rank's last log lines and
exits with that worker's status (128+signal for a killed one); when all succeed it exits 0. Workers die with the
launcher (PR_SET_PDEATHSIG), so a killed launcher leaves no orphans. Unlike MindSpore's msrun, the launcher always
stays until the workers end (--join only decides whether their output is also shown), so that a failure always
ends the job. Collectives and the rendezvous wait at most --cluster_time_out seconds for a peer (default 600).

The rendezvous store listens only on --master_addr (0.0.0.0, every interface, only when given explicitly), and
admits only processes that know the job's token (KILN_RENDEZVOUS_TOKEN): a one-node launcher makes a random one
(secrets.token_hex(32)) unless the variable is already set, and hands it to its workers in their environment; a
job on several nodes needs the same KILN_RENDEZVOUS_TOKEN exported to every node's launcher (docs/distributed.md).
"""
import argparse
import ctypes
import os
import secrets
import signal
import subprocess
import sys
import threading
import time

__all__ = ["main"]

_TAIL_LINES = 40


def _parser():
    p = argparse.ArgumentParser(prog="python -m kiln.msrun", description="Start the worker processes of a "
                                "data-parallel Kiln/MindSpore job on this node (MindSpore's msrun flags).")
    p.add_argument("--worker_num", type=int, default=8, help="total number of workers on all nodes (default 8)")
    p.add_argument("--local_worker_num", type=int, default=8, help="workers started on this node (default 8)")
    p.add_argument("--master_addr", default="127.0.0.1", help="node 0's address (default 127.0.0.1)")
    p.add_argument("--master_port", type=int, default=8118, help="the rendezvous store's port (default 8118)")
    p.add_argument("--node_rank", type=int, default=-1, help="this node's index, 0 … nodes-1 (default -1: 0)")
    p.add_argument("--log_dir", default=".", help="directory of the per-rank logs worker_<rank>.log (default .)")
    p.add_argument("--join", action="store_true",
                   help="also show the workers' output here (also MindSpore's spelling --join=True / --join=False)")
    p.add_argument("--cluster_time_out", type=int, default=600,
                   help="seconds a worker waits for its peers at rendezvous or in a collective (default 600)")
    p.add_argument("task_script", help="the Python script every worker runs (or 'pytest', run as python -m "
                   "pytest with the arguments that follow)")
    p.add_argument("task_script_args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def _check(p, args):
    if args.worker_num < 1:
        p.error(f"--worker_num must be >= 1, got {args.worker_num}")
    if not 1 <= args.local_worker_num <= args.worker_num:
        p.error(f"--local_worker_num must be in [1, --worker_num={args.worker_num}], got {args.local_worker_num}")
    if args.node_rank < 0:
        args.node_rank = 0
    if (args.node_rank + 1) * args.local_worker_num > args.worker_num:
        p.error(f"node {args.node_rank} with {args.local_worker_num} workers would start ranks beyond "
                f"--worker_num={args.worker_num} (node R runs ranks R*local_worker_num ...)")
    if not 1 <= args.master_port <= 65535:
        p.error(f"--master_port must be in [1, 65535], got {args.master_port}")
    if args.cluster_time_out < 1:
        p.error(f"--cluster_time_out must be >= 1 second, got {args.cluster_time_out}")
    if not os.path.isfile(args.task_script) and args.task_script != "pytest":
        p.error(f"the task script {args.task_script!r} does not exist")
    from ..communication._store import MIN_TOKEN_LEN, TOKEN_VAR, check_token, is_loopback
    several_nodes = args.local_worker_num < args.worker_num
    token = os.environ.get(TOKEN_VAR)
    if token is not None:
        try:
            check_token(token, f"the environment variable {TOKEN_VAR}")
        except ValueError as e:
            p.error(str(e))
    elif several_nodes:
        p.error(f"a job on several nodes (--worker_num={args.worker_num} > --local_worker_num="
                f"{args.local_worker_num}) needs the same rendezvous token on every node: export {TOKEN_VAR} (a "
                f"secret of at least {MIN_TOKEN_LEN} characters, e.g. from `python -c \"import secrets; "
                f"print(secrets.token_hex(32))\"`) to every node's launcher")
    else:
        token = secrets.token_hex(32)
    args.token = token
    if several_nodes and args.node_rank == 0 and is_loopback(args.master_addr):
        p.error(f"--master_addr={args.master_addr!r} is a loopback address on this node, which the other nodes of "
                f"the job cannot reach: give node 0's address on the network the nodes share")


def _die_with_parent():
    """preexec_fn: the worker gets SIGKILL when the launcher dies (Linux prctl PR_SET_PDEATHSIG), and leads its
    own process group so that stopping it also stops its children (dataset workers)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except OSError:
        pass


_VALUE_FLAGS = ("--worker_num", "--local_worker_num", "--master_addr", "--master_port", "--node_rank", "--log_dir",
                "--cluster_time_out")


def _join_spelling(argv):
    """MindSpore's run scripts write --join=True (its msrun takes a bool value): before the task script, --join=True
    becomes --join and --join=False is dropped; another value is left for argparse to refuse."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):  # the task script: the rest are its arguments
            return out + list(argv[i:])
        if a.lower() == "--join=true":
            a = "--join"
        elif a.lower() == "--join=false":
            i += 1
            continue
        out.append(a)
        if a in _VALUE_FLAGS and i + 1 < len(argv):  # its value as the next word
            out.append(argv[i + 1])
            i += 1
        i += 1
    return out


class _Worker:
    def __init__(self, rank, local_rank, args, log_dir):
        env = dict(os.environ)
        env.update({
            "MS_ROLE": "MS_WORKER", "MS_WORKER_NUM": str(args.worker_num),
            "MS_LOCAL_WORKER": str(args.local_worker_num), "MS_SCHED_HOST": args.master_addr,
            "MS_SCHED_PORT": str(args.master_port), "MS_NODE_ID": str(rank), "RANK_ID": str(rank),
            "RANK_SIZE": str(args.worker_num), "LOCAL_RANK": str(local_rank), "DEVICE_ID": str(local_rank),
            "KILN_STORE_HOSTED": "1", "KILN_COMM_TIMEOUT": str(args.cluster_time_out),
            "KILN_RENDEZVOUS_TOKEN": args.token,
            "PYTHONUNBUFFERED": "1",
        })
        self.rank = rank
        self.log_path = os.path.join(log_dir, f"worker_{rank}.log")
        self.log = open(self.log_path, "wb")
        # MindSpore's tutorials launch `msrun ... pytest -s -v file.py::test`: pytest runs as a module of this Python
        script = ["-m", "pytest"] if args.task_script == "pytest" and not os.path.isfile("pytest") else \
            [args.task_script]
        cmd = [sys.executable, "-m", "kiln.compat"] + script + list(args.task_script_args)
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent, start_new_session=True)
        self.pump = threading.Thread(target=self._pump, args=(args.join,), daemon=True)
        self.pump.start()
        self.exit_time = None  # set by the waiter thread when the process has exited (orders failures)
        self.waiter = threading.Thread(target=self._wait, daemon=True)
        self.waiter.start()

    def _wait(self):
        self.proc.wait()
        self.exit_time = time.monotonic()

    def exited(self):
        return self.exit_time is not None

    def _pump(self, echo):
        prefix = f"[rank {self.rank}] ".encode()
        for line in iter(self.proc.stdout.readline, b""):
            self.log.write(line)
            self.log.flush()
            if echo:
                sys.stdout.buffer.write(prefix + line)
                sys.stdout.flush()
        self.log.close()

    def signal(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def tail(self):
        self.pump.join(timeout=5)
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-_TAIL_LINES:])


def _describe(code):
    return f"was killed by signal {-code} ({signal.Signals(-code).name})" if code < 0 else f"exited with status {code}"


def _stop(workers, grace=5.0):
    """SIGTERM to every live worker's process group, SIGKILL after `grace` seconds; reaps them all."""
    live = [w for w in workers if not w.exited()]
    for w in live:
        w.signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for w in live:
        try:
            w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for w in workers:
        w.signal(signal.SIGKILL)  # the group: children of a worker that exited may still run
        try:
            w.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def main(argv=None):
    """Runs the launcher with `argv` (default sys.argv[1:]); returns the exit status (0: every worker succeeded)."""
    p = _parser()
    args = p.parse_args(_join_spelling(sys.argv[1:] if argv is None else list(argv)))
    _check(p, args)
    os.makedirs(args.log_dir, exist_ok=True)
    store = None
    if args.node_rank == 0:
        from ..communication._store import StoreServer
        try:
            # only on the address the job names (0.0.0.0 only when --master_addr says so)
            store = StoreServer(args.master_addr, args.master_port, args.token)
        except OSError as e:
            print(f"kiln.msrun: {e.strerror}", file=sys.stderr)
            return 1
    workers = []
    stop = {"signal": None}

    def on_signal(sig, _frame):
        stop["signal"] = sig

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    status = 0
    try:
        base = args.node_rank * args.local_worker_num
        for i in range(args.local_worker_num):
            workers.append(_Worker(base + i, i, args, args.log_dir))
        print(f"kiln.msrun: node {args.node_rank} started ranks {base}..{base + args.local_worker_num - 1} of "
              f"{args.worker_num}; logs in {os.path.abspath(args.log_dir)}", flush=True)
        while True:
            if stop["signal"] is not None:
                print(f"kiln.msrun: received {signal.Signals(stop['signal']).name}; stopping the workers.",
                      file=sys.stderr, flush=True)
                _stop(workers)
                status = 128 + stop["signal"]
                break
            failed = sorted((w for w in workers if w.exited() and w.proc.returncode != 0),
                            key=lambda w: w.exit_time)
            if failed:
                # A peer's failure often makes others fail too (their collectives lose the connection): report
                # every rank that has failed so far, the first to fail first; the job's status is the first's.
                _stop(workers)
                for w in failed:
                    print(f"kiln.msrun: rank {w.rank} {_describe(w.proc.returncode)}. Last lines of {w.log_path}:\n"
                          f"{w.tail()}", file=sys.stderr, flush=True)
                print("kiln.msrun: stopped the other workers; the job failed.", file=sys.stderr, flush=True)
                code = failed[0].proc.returncode
                status = 128 - code if code < 0 else code
                break
            if all(w.exited() for w in workers):
                print(f"kiln.msrun: all {len(workers)} workers of node {args.node_rank} finished.", flush=True)
                break
            time.sleep(0.1)
    finally:
        if any(not w.exited() for w in workers):
            _stop(workers, grace=0.0)
        for w in workers:
            w.waiter.join(timeout=5)
            w.pump.join(timeout=5)
        for s, h in old.items():
            signal.signal(s, h)
        if store is not None:
            store.close()
    return status
