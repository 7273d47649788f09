"""Run by tests/python/test_rendezvous_auth.py with 2 processes, under `python -m kiln.msrun` (argv[1] 'msrun') or
started by hand (argv[1] 'hand'): the rendezvous store listens only on MS_SCHED_HOST and refuses strangers, while the
job goes on. Rank 0, after init: (1) the only socket listening on MS_SCHED_PORT is on MS_SCHED_HOST, and another
loopback address (127.0.0.2 or .3) is refused on that port; (2) a client without the token that sends a request
right away gets the challenge, a refusal and a closed connection, and its key is not written; (3) a client with a
wrong token is refused; (4) a silent connection stays open meanwhile. Then both ranks create a group (a new
rendezvous through the store) and all-reduce. Prints 'STRANGER <addr>', 'WRONG <addr>' and 'RDZV OK <rank>'."""
import os
import re
import socket
import sys

import numpy as np

from mindspore import Tensor, ops
from mindspore.communication import create_group, get_group_size, get_rank, init

import rdzv_client as rc

how = sys.argv[1]
host, port = os.environ["MS_SCHED_HOST"], int(os.environ["MS_SCHED_PORT"])
token = os.environ.get("KILN_RENDEZVOUS_TOKEN")
if how == "msrun":
    # the launcher made a token and handed it over
    assert token is not None and re.fullmatch("[0-9a-f]{64}", token), token
init()
rank, size = get_rank(), get_group_size()
assert size == 2

silent = None
if rank == 0:
    listening = rc.listening_addresses(port)
    assert listening == [host], f"the store listens on {listening}, expected only {host}"
    other = "127.0.0.3" if host == "127.0.0.2" else "127.0.0.2"
    try:
        socket.create_connection((other, port), timeout=10).close()
        raise AssertionError(f"the store answered on {other}:{port}, though the job names {host}")
    except ConnectionRefusedError:
        pass

    silent = socket.create_connection((host, port), timeout=10)  # says nothing, stays open during the job

    got, me = rc.stranger(host, port)
    assert len(got) == 41 and got[:8] == rc.MAGIC and got[40:] == b"\x00", got  # challenge, refusal, closed
    print("STRANGER", me, flush=True)
    got, me = rc.wrong_token(host, port)
    assert got == b"\x00", got
    print("WRONG", me, flush=True)
    if token:
        c = rc.Client(host, port, token)
        assert c.get(b"poison") is None  # the stranger wrote nothing
        c.close()

# the store still serves the job: a new group meets through it, then collectives run
create_group("pair", [1, 0])
x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1))
out = ops.AllReduce()(x).asnumpy()
assert np.array_equal(out, np.arange(6, dtype=np.float32).reshape(2, 3) * 3), out
out = ops.AllReduce(group="pair")(x).asnumpy()
assert np.array_equal(out, np.arange(6, dtype=np.float32).reshape(2, 3) * 3), out
if silent is not None:
    silent.close()
print("RDZV OK", rank, flush=True)
