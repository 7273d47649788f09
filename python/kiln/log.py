"""`mindspore.log`: the framework's logger, which MindSpore scripts also use for their own messages
(`from mindspore import log as logger; logger.info("epoch %d", i)`).

The level comes from the environment variable MindSpore uses, GLOG_v, read when the first message is logged:
0 DEBUG, 1 INFO, 2 WARNING (the default), 3 ERROR, 4 CRITICAL. Messages go to standard error, one line each, in
MindSpore's layout with Kiln's component name:

    [WARNING] KILN(1234:140208381610880,MainProcess):2026-12-01-02:39:48.700.123 [train.py:42] message

(level, process id, thread id, process name, local time to the microsecond, the caller's file and line). MindSpore's
log files (GLOG_logtostderr=0 with GLOG_log_dir) are not written: messages always go to standard error.
`logging` is Python's logging module, as in MindSpore's module (`from mindspore.log import logging`).
"""
import logging
import os
import sys
import threading
import time

__all__ = ["debug", "info", "warning", "error", "critical", "get_level", "get_log_config", "logging"]

# GLOG_v value -> Python logging level, and the names MindSpore prints.
_GLOG_TO_LEVEL = {"0": logging.DEBUG, "1": logging.INFO, "2": logging.WARNING, "3": logging.ERROR,
                  "4": logging.CRITICAL}
_LEVEL_NAME = {logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARNING", logging.ERROR: "ERROR",
               logging.CRITICAL: "CRITICAL"}
_lock = threading.Lock()
_logger = None


class _Formatter(logging.Formatter):
    """MindSpore's line layout: [LEVEL] KILN(pid:tid,process):YYYY-MM-DD-HH:MM:SS.mmm.uuu [file:line] message."""

    def format(self, record):
        t = time.localtime(record.created)
        frac = int(round((record.created % 1) * 1_000_000)) % 1_000_000
        stamp = time.strftime("%Y-%m-%d-%H:%M:%S", t) + f".{frac // 1000:03d}.{frac % 1000:03d}"
        head = (f"[{_LEVEL_NAME.get(record.levelno, record.levelname)}] KILN({record.process}:{record.thread},"
                f"{record.processName}):{stamp} [{os.path.basename(record.pathname)}:{record.lineno}]")
        return f"{head} {record.getMessage()}"


def _env_level():
    value = os.environ.get("GLOG_v", "2").strip()
    if value not in _GLOG_TO_LEVEL:
        raise ValueError(f"For 'mindspore.log', the environment variable GLOG_v must be one of 0, 1, 2, 3, 4 "
                         f"(DEBUG, INFO, WARNING, ERROR, CRITICAL), but got {value!r}.")
    return _GLOG_TO_LEVEL[value]


def _get_logger():
    """The logger, made on first use with the level GLOG_v gives (ValueError for a GLOG_v outside 0-4)."""
    global _logger
    with _lock:
        if _logger is None:
            lg = logging.getLogger("kiln.log")
            lg.propagate = False
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(_Formatter())
            lg.addHandler(handler)
            lg.setLevel(_env_level())
            _logger = lg
        return _logger


def _log(level, msg, args, kwargs):
    # stacklevel 3: the line of the caller of debug()/info()/..., not this module's.
    _get_logger().log(level, msg, *args, stacklevel=3, **kwargs)


def debug(msg, *args, **kwargs):
    """Logs `msg % args` at DEBUG (shown with GLOG_v=0). kwargs as Python logging's (exc_info, stack_info, extra)."""
    _log(logging.DEBUG, msg, args, kwargs)


def info(msg, *args, **kwargs):
    """Logs `msg % args` at INFO (shown with GLOG_v <= 1)."""
    _log(logging.INFO, msg, args, kwargs)


def warning(msg, *args, **kwargs):
    """Logs `msg % args` at WARNING (shown with GLOG_v <= 2, the default)."""
    _log(logging.WARNING, msg, args, kwargs)


def error(msg, *args, **kwargs):
    """Logs `msg % args` at ERROR (shown with GLOG_v <= 3)."""
    _log(logging.ERROR, msg, args, kwargs)


def critical(msg, *args, **kwargs):
    """Logs `msg % args` at CRITICAL (always shown)."""
    _log(logging.CRITICAL, msg, args, kwargs)


def get_level():
    """The current level as MindSpore gives it: the GLOG_v digit as a str ('2' for WARNING by default)."""
    level = _get_logger().getEffectiveLevel()
    return next(k for k, v in _GLOG_TO_LEVEL.items() if v == level)


def get_log_config():
    """The logging configuration, as MindSpore's dict: {'GLOG_v': level digit, 'GLOG_logtostderr': '1'}
    (Kiln always logs to standard error)."""
    return {"GLOG_v": get_level(), "GLOG_logtostderr": "1"}
