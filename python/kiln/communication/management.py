"""mindspore.communication's management functions: init/release, ranks and sizes, groups.

A process joins the world from the launcher's environment (MindSpore's msrun variable names, set by
`python -m kiln.msrun`):

    MS_WORKER_NUM   world size                    MS_NODE_ID (or RANK_ID)  this process's world rank
    MS_SCHED_HOST   rendezvous store host         MS_SCHED_PORT            rendezvous store port
    MS_LOCAL_WORKER processes on this node        LOCAL_RANK               this process's index on its node
    KILN_COMM_TIMEOUT seconds a rendezvous or collective may wait (default 300; msrun --cluster_time_out)
    KILN_RENDEZVOUS_TOKEN the job's secret (>= 16 characters, the same on every process): every connection to
                    the rendezvous store proves it knows it (msrun makes one; by hand, set it on every process;
                    optional only when MS_SCHED_HOST is a loopback address, with a warning)

Without the launcher, rank 0 serves the store itself, listening only on MS_SCHED_HOST (docs/distributed.md).

Collectives run on Gloo (docs/decisions/collectives-gloo.md); the world group has MindSpore's names
HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP and MCCL_WORLD_COMM_GROUP (all the same group in Kiln).
"""
import os
import socket
import threading
import warnings

from .. import _engine

__all__ = ["GlobalComm", "HCCL_WORLD_COMM_GROUP", "NCCL_WORLD_COMM_GROUP", "MCCL_WORLD_COMM_GROUP", "init", "release",
           "get_rank", "get_local_rank", "get_group_size", "get_local_rank_size", "get_world_rank_from_group_rank",
           "get_group_rank_from_world_rank", "create_group", "destroy_group", "get_process_group_ranks"]

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"
_WORLD_NAMES = (HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP)
_BACKENDS = ("hccl", "nccl", "mccl", "gloo")


class GlobalComm:
    """MindSpore's GlobalComm: the backend name, the world group's name and whether init() ran.

    Before init: BACKEND 'hccl', WORLD_COMM_GROUP 'hccl_world_group' (MindSpore's defaults). After init Kiln runs
    on CPU: BACKEND 'mccl' (MindSpore's CPU collective backend; Kiln implements it with Gloo) and WORLD_COMM_GROUP
    'mccl_world_group'. Every world name refers to the same group."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


_lock = threading.Lock()
_state = {"local_rank": 0, "local_size": 1, "store": None, "warned": False}


def _group(group, fn):
    """The C++ group name for a MindSpore group name (the world's names → 'world'); TypeError if not a str."""
    if not isinstance(group, str):
        raise TypeError(f"For '{fn}', the argument 'group' must be a str, but got {type(group).__name__}.")
    return "world" if group in _WORLD_NAMES or group == "world" else group


def _check_init(fn):
    if not GlobalComm.INITED:
        raise RuntimeError(f"For '{fn}', mindspore.communication.init() has not been called (run the script with "
                           f"`python -m kiln.msrun --worker_num=N --local_worker_num=N script.py`, then call init()).")


def _env_int(name, env, lo, fn):
    raw = env.get(name)
    try:
        v = int(raw)
    except (TypeError, ValueError):
        raise RuntimeError(f"For '{fn}', the environment variable {name} must be an integer, but got "
                           f"{raw!r}.") from None
    if v < lo:
        raise RuntimeError(f"For '{fn}', the environment variable {name} must be >= {lo}, but got {v}.")
    return v


def _token(env, host, size):
    """The job's rendezvous token from KILN_RENDEZVOUS_TOKEN (see the module docstring). RuntimeError when it is
    malformed, or missing for a job whose store is not on a loopback address; "" (with a warning) when missing for
    a loopback job of several processes (anyone on this machine could join it)."""
    from ._store import MIN_TOKEN_LEN, TOKEN_VAR, check_token, is_loopback
    raw = env.get(TOKEN_VAR)
    if raw is not None:
        try:
            return check_token(raw, f"For 'init', the environment variable {TOKEN_VAR}")
        except ValueError as e:
            raise RuntimeError(str(e)) from None
    if size == 1:
        return ""
    if not is_loopback(host):
        raise RuntimeError(
            f"For 'init', the environment variable {TOKEN_VAR} is not set, and the rendezvous store at MS_SCHED_HOST="
            f"{host!r} can be reached from other machines: set {TOKEN_VAR} to the same secret of at least "
            f"{MIN_TOKEN_LEN} characters on every process of the job (make one with `python -c \"import secrets; "
            f"print(secrets.token_hex(32))\"`), or start the job with `python -m kiln.msrun`, which makes one.")
    warnings.warn(f"Kiln: {TOKEN_VAR} is not set: the rendezvous store on {host} accepts any process of this machine. "
                  f"Set it on every process of the job (or start the job with python -m kiln.msrun) to admit only "
                  f"the job's processes.", RuntimeWarning, stacklevel=3)
    return ""


def _launch_env(env=None):
    """Reads the launcher's variables: (rank, size, host, port, local_rank, local_size, timeout_s). RuntimeError
    naming what is missing when the process was not started by a launcher."""
    env = os.environ if env is None else env
    fn = "init"
    if "MS_WORKER_NUM" not in env or "MS_SCHED_HOST" not in env or "MS_SCHED_PORT" not in env:
        raise RuntimeError(
            "For 'init', this process was not started by a launcher: the environment variables MS_WORKER_NUM, "
            "MS_SCHED_HOST and MS_SCHED_PORT are not all set. Run it with `python -m kiln.msrun --worker_num=N "
            "--local_worker_num=N script.py [args]` (MindSpore's msrun), or set them (and MS_NODE_ID) per process.")
    role = env.get("MS_ROLE", "MS_WORKER")
    if role != "MS_WORKER":
        raise RuntimeError(f"For 'init', MS_ROLE={role!r} is not supported by Kiln: the launcher serves the "
                           f"rendezvous itself, so every process is an 'MS_WORKER'.")
    size = _env_int("MS_WORKER_NUM", env, 1, fn)
    rank_var = "MS_NODE_ID" if "MS_NODE_ID" in env else "RANK_ID"
    if rank_var not in env:
        raise RuntimeError("For 'init', neither MS_NODE_ID nor RANK_ID is set: Kiln needs each process's rank "
                           "(python -m kiln.msrun sets it).")
    rank = _env_int(rank_var, env, 0, fn)
    if rank >= size:
        raise RuntimeError(f"For 'init', the rank {rank_var}={rank} is not below MS_WORKER_NUM={size}.")
    port = _env_int("MS_SCHED_PORT", env, 1, fn)
    if port > 65535:
        raise RuntimeError(f"For 'init', MS_SCHED_PORT must be in [1, 65535], but got {port}.")
    local_size = _env_int("MS_LOCAL_WORKER", env, 1, fn) if "MS_LOCAL_WORKER" in env else size
    local_rank = _env_int("LOCAL_RANK", env, 0, fn) if "LOCAL_RANK" in env else rank % local_size
    try:
        timeout = float(env.get("KILN_COMM_TIMEOUT", "300"))
    except ValueError:
        raise RuntimeError(f"For 'init', KILN_COMM_TIMEOUT must be a number of seconds, but got "
                           f"{env.get('KILN_COMM_TIMEOUT')!r}.") from None
    if not timeout > 0:
        raise RuntimeError(f"For 'init', KILN_COMM_TIMEOUT must be > 0 seconds, but got {timeout}.")
    return rank, size, env["MS_SCHED_HOST"], port, local_rank, local_size, timeout


def _local_address(host, port):
    """The address of this machine's interface that reaches `host` (what peers connect to, and what Gloo listens
    on): no packet is sent. "" (Gloo then uses the address of this host's name) for the wildcard 0.0.0.0 / ::,
    which names no interface."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return "127.0.0.1"
    if host in ("0.0.0.0", "::", ""):
        return ""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((host, port))
            return s.getsockname()[0]
    except OSError:
        return ""  # Gloo then uses this host's name


def init(backend_name=None):
    """Joins this process to the world group, from the launcher's environment (see the module docstring).

    Args:
        backend_name (str, optional): None (default), 'hccl', 'nccl', 'mccl' or 'gloo'. Kiln's collectives run on
            CPU with Gloo whatever the name: a script written for Ascend ('hccl') or GPU ('nccl') runs unchanged,
            with one warning that the device backend is not available.

    Blocks until every process of the world has joined (at most KILN_COMM_TIMEOUT seconds). Calling it again in
    an initialized process does nothing, as in MindSpore.

    Raises:
        TypeError: backend_name not a str or None.
        ValueError: an unknown backend name.
        RuntimeError: not started by a launcher (missing MS_WORKER_NUM / MS_SCHED_HOST / MS_SCHED_PORT / rank), a
            malformed KILN_RENDEZVOUS_TOKEN or none for a store other machines can reach, the store refused this
            process's token, or the rendezvous failed or timed out (a peer did not start).
        OSError: rank 0 (without the launcher) cannot serve the store on MS_SCHED_HOST:MS_SCHED_PORT.
    """
    if backend_name is not None and not isinstance(backend_name, str):
        raise TypeError(f"For 'init', the argument 'backend_name' must be a str or None, but got "
                        f"{type(backend_name).__name__}.")
    if backend_name is not None and backend_name not in _BACKENDS:
        raise ValueError(f"For 'init', the argument 'backend_name' must be one of {list(_BACKENDS)} or None, "
                         f"but got {backend_name!r}.")
    with _lock:
        if GlobalComm.INITED:
            return
        rank, size, host, port, local_rank, local_size, timeout = _launch_env()
        token = _token(os.environ, host, size)
        if backend_name in ("hccl", "nccl") and not _state["warned"]:
            _state["warned"] = True
            warnings.warn(f"Kiln: the '{backend_name}' backend needs devices this machine lacks; collectives run "
                          f"on CPU with Gloo.", stacklevel=2)
        store = None
        if rank == 0 and size > 1 and os.environ.get("KILN_STORE_HOSTED") != "1":
            # Started without kiln.msrun (MindSpore's "dynamic cluster" variables set by hand): rank 0 serves, on
            # the address the job names only (0.0.0.0 only when MS_SCHED_HOST says so).
            from ._store import StoreServer
            store = StoreServer(host, port, token)
        try:
            _engine.comm_init(rank, size, host if size > 1 else "", port, _local_address(host, port) if size > 1
                            else "", int(timeout * 1000), "gloo", token)
        except BaseException:
            if store is not None:
                store.close()
            raise
        _state.update(local_rank=local_rank, local_size=local_size, store=store)
        GlobalComm.BACKEND = "mccl"
        GlobalComm.WORLD_COMM_GROUP = MCCL_WORLD_COMM_GROUP
        GlobalComm.INITED = True


def release():
    """Leaves every group (collectives then raise until init() runs again). No-op when not initialized."""
    with _lock:
        if not GlobalComm.INITED:
            return
        if _state["store"] is not None:
            # Rank 0 serves the store: wait until every peer has joined the world (done: init returned), then stop.
            _state["store"].close()
            _state["store"] = None
        _engine.comm_release()
        GlobalComm.INITED = False
        GlobalComm.BACKEND = "hccl"
        GlobalComm.WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP


def get_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank in `group` (default the world): an int in [0, get_group_size(group)).

    Raises RuntimeError before init(), TypeError for a non-str group, ValueError for an unknown group."""
    g = _group(group, "get_rank")
    _check_init("get_rank")
    return _engine.comm_group_rank(g)


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of processes in `group` (default the world). Errors as get_rank."""
    g = _group(group, "get_group_size")
    _check_init("get_group_size")
    return _engine.comm_group_size(g)


def _world_only(group, fn):
    g = _group(group, fn)
    _check_init(fn)
    if g != "world":
        raise ValueError(f"For '{fn}', only the world group is supported (as MindSpore), but got {group!r}.")


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's index among the processes of its node (the launcher's LOCAL_RANK). World group only
    (ValueError otherwise, as MindSpore); RuntimeError before init()."""
    _world_only(group, "get_local_rank")
    return _state["local_rank"]


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of processes on this node (the launcher's --local_worker_num). World group only."""
    _world_only(group, "get_local_rank_size")
    return _state["local_size"]


def get_process_group_ranks(group=GlobalComm.WORLD_COMM_GROUP):
    """The world ranks of `group`'s members, in group-rank order (a list of ints)."""
    g = _group(group, "get_process_group_ranks")
    _check_init("get_process_group_ranks")
    return list(_engine.comm_group_ranks(g))


def _int_arg(v, name, fn):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"For '{fn}', the argument '{name}' must be an int, but got {type(v).__name__}.")
    return v


def get_world_rank_from_group_rank(group, group_rank_id):
    """The world rank of member `group_rank_id` of `group`. ValueError if out of range or the group is the world
    (as MindSpore: the world needs no translation)."""
    fn = "get_world_rank_from_group_rank"
    g = _group(group, fn)
    _int_arg(group_rank_id, "group_rank_id", fn)
    _check_init(fn)
    if g == "world":
        raise ValueError(f"For '{fn}', the group must not be the world group '{group}'.")
    ranks = _engine.comm_group_ranks(g)
    if not 0 <= group_rank_id < len(ranks):
        raise ValueError(f"For '{fn}', 'group_rank_id' must be in [0, {len(ranks)}), but got {group_rank_id}.")
    return int(ranks[group_rank_id])


def get_group_rank_from_world_rank(world_rank_id, group):
    """The rank in `group` of world rank `world_rank_id`. ValueError if that process is not a member, or the group
    is the world."""
    fn = "get_group_rank_from_world_rank"
    g = _group(group, fn)
    _int_arg(world_rank_id, "world_rank_id", fn)
    _check_init(fn)
    if g == "world":
        raise ValueError(f"For '{fn}', the group must not be the world group '{group}'.")
    ranks = list(_engine.comm_group_ranks(g))
    if world_rank_id not in ranks:
        raise ValueError(f"For '{fn}', world rank {world_rank_id} is not a member of group '{group}' "
                         f"(members: {ranks}).")
    return ranks.index(world_rank_id)


def create_group(group, rank_ids, options=None):
    """Creates the communication group `group` of the world ranks `rank_ids` (group rank i is rank_ids[i]).

    Every member calls it (non-members do not), in the same order relative to other create_group calls; it blocks
    until all members have. `options` (MindSpore's HCCL/NCCL tuning) must be None.

    Raises:
        TypeError: group not a str, rank_ids not a list/tuple of ints.
        ValueError: the name is a world name or already exists, rank_ids empty / repeated / out of range, this
            process is not in rank_ids, options given.
        RuntimeError: before init(); the members did not all join within the timeout.
    """
    fn = "create_group"
    if not isinstance(group, str):
        raise TypeError(f"For '{fn}', the argument 'group' must be a str, but got {type(group).__name__}.")
    if group in _WORLD_NAMES or group == "world":
        raise ValueError(f"For '{fn}', the group name {group!r} is reserved for the world group.")
    if not isinstance(rank_ids, (list, tuple)):
        raise TypeError(f"For '{fn}', the argument 'rank_ids' must be a list, but got {type(rank_ids).__name__}.")
    for r in rank_ids:
        _int_arg(r, "rank_ids", fn)
    if options is not None:
        raise ValueError(f"For '{fn}', 'options' (HCCL/NCCL configuration) is not supported by Kiln's Gloo backend; "
                         f"pass None.")
    _check_init(fn)
    _engine.comm_create_group(group, list(rank_ids))


def destroy_group(group):
    """Destroys a group made by create_group. ValueError for the world group or an unknown group; RuntimeError
    before init()."""
    fn = "destroy_group"
    g = _group(group, fn)
    _check_init(fn)
    if g == "world":
        raise ValueError(f"For '{fn}', the world group {group!r} cannot be destroyed.")
    _engine.comm_destroy_group(g)
