"""DatasetCache: MindSpore's handle on a session of its dataset cache server. Kiln has no cache server, so the
handle is built (with MindSpore's argument checks) but a pipeline given `cache=` refuses it, saying what is
missing (MindSpore itself raises "Cache server ... is unreachable" when no server runs, as on a machine without
its `dataset-cache` program; tutorial dataset/cache.md)."""


def _int(value, name, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Argument {name} with value {value} is not of type [<class 'int'>], but got {type(value)}.")
    if not lo <= value <= hi:
        raise ValueError(f"Input {name} is not within the required interval of [{lo}, {hi}].")
    return value


class DatasetCache:
    """A cache session handle (MindSpore's `mindspore.dataset.DatasetCache`): the arguments are checked as
    MindSpore checks them; using it (`cache=` of a source or of `map`) raises RuntimeError, since Kiln has no
    dataset cache server (see check_cache).

    Args:
        session_id (int): the server's session id, in [1, 4294967295].
        size (int): memory limit in MB, 0 (no limit) or positive. spilling (bool): spill to disk.
        hostname (str, optional), port (int in [1025, 65535], optional), num_connections, prefetch_size (int >= 1,
            optional): where and how to reach the server.

    Raises:
        TypeError / ValueError: an argument of the wrong type or outside its range (MindSpore's words).
    """

    def __init__(self, session_id, size=0, spilling=False, hostname=None, port=None, num_connections=None,
                 prefetch_size=None):
        self.session_id = _int(session_id, "session_id", 1, 2**32 - 1)
        self.size = _int(size, "size", 0, 2**64 - 1)
        if not isinstance(spilling, bool):
            raise TypeError(f"Argument spilling with value {spilling} is not of type [<class 'bool'>], but got "
                            f"{type(spilling)}.")
        if hostname is not None and not isinstance(hostname, str):
            raise TypeError(f"Argument hostname with value {hostname} is not of type [<class 'str'>], but got "
                            f"{type(hostname)}.")
        if port is not None:
            _int(port, "port", 1025, 65535)
        for name, v in (("num_connections", num_connections), ("prefetch_size", prefetch_size)):
            if v is not None:
                _int(v, name, 1, 2**31 - 1)
        self.spilling, self.hostname, self.port = spilling, hostname, port
        self.num_connections, self.prefetch_size = num_connections, prefetch_size

    def get_stat(self):
        """MindSpore asks the server for cache statistics; Kiln has none: RuntimeError."""
        raise RuntimeError("DatasetCache.get_stat: Kiln has no dataset cache server (MindSpore's `dataset-cache`), "
                           "so there are no cache statistics.")

    def __repr__(self):
        return f"DatasetCache(session_id={self.session_id}, size={self.size}, spilling={self.spilling})"


def check_cache(where, cache):
    """Refuses `cache=` of a source or map: None passes; a DatasetCache raises RuntimeError naming what is missing;
    anything else TypeError."""
    if cache is None:
        return
    if not isinstance(cache, DatasetCache):
        raise TypeError(f"Argument cache with value {cache!r} is not of type [DatasetCache], but got "
                        f"{type(cache)}.")
    raise RuntimeError(f"{where}: cache={cache!r} needs MindSpore's dataset cache server (the `dataset-cache` "
                       "program and its client), which Kiln does not have; leave cache out (the pipeline then "
                       "reads its source in every epoch). MindSpore 2.10 itself stops with 'Cache server ... is "
                       "unreachable' where no server runs.")
