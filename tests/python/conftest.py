import os
import sys

# Tests run against the installed package, or against python/ in a development build (tools/dev_build.sh).
sys.path.insert(0, os.path.dirname(__file__))

import signal

import pytest


@pytest.fixture(autouse=True)
def _sigint_handler_unchanged():
    """Every test leaves the process's SIGINT handler as it found it (Python's default_int_handler). A test that
    changed it would make later Ctrl-C / KeyboardInterrupt tests fail (and subprocesses inherit an ignored SIGINT),
    far from the cause: the change is undone and reported here, on the test that made it."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the test changed the SIGINT handler from {before!r} to {after!r}")


@pytest.fixture
def graph_mode():
    """Runs the test in GRAPH_MODE and restores PYNATIVE_MODE after it."""
    import kiln
    kiln.set_context(mode=kiln.GRAPH_MODE)
    yield
    kiln.set_context(mode=kiln.PYNATIVE_MODE)


@pytest.fixture
def cache_dir(tmp_path):
    """The on-disk compile cache switched on in a fresh directory (its path is the value); off again after the test,
    and the two settings no longer count as set by the user."""
    import kiln
    from kiln import context
    kiln.set_context(enable_compile_cache=True, compile_cache_path=str(tmp_path))
    yield str(tmp_path)
    kiln.set_context(enable_compile_cache=False, compile_cache_path=".")
    context._explicit.discard("enable_compile_cache")
    context._explicit.discard("compile_cache_path")


@pytest.fixture
def allocator_cache_off():
    """The allocator's cache disabled for the test (restored to the default after): memory_allocated() then counts
    each live block at its own size class. With the cache on, a cached block of a larger class may serve a smaller
    request and is counted at its own size (docs/decisions/allocator-cache.md), so a comparison of
    memory_allocated() across rounds would depend on what earlier tests left in the cache."""
    from kiln import runtime
    runtime.set_cache_limit(0)
    yield
    runtime.set_cache_limit(None)
