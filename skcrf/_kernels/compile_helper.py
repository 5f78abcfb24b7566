"""Compile kernels in a helper process while this process does other work.

Numba compiles one kernel at a time, in the process that first calls it: a
cold first run (``skcrf demo`` on a fresh install) spends most of its wall
time compiling on one core while the other cores wait. The kernels such a
run needs later (the CRF's fit and predict) can be compiled ahead, in a
second process, on a small synthetic problem of the same argument types:
they land in Numba's on-disk cache, and this process loads them from there
when it gets to them. Meanwhile this process compiles what it needs first
(the featurisation kernels).

:func:`start` spawns a helper for one *stage* (``"fit"``: the training
kernels; ``"predict"``: the decoding ones), only when the cache is cold (with
a warm cache there is nothing to compile ahead, and a helper would only take a
core). :func:`wait`, called where this process would start compiling the same
kernels (``wait("fit")`` at the start of ``LinearChainCRF.fit``, ``wait()``
before decoding), waits for that stage's helper to finish, so that two
processes never compile the same kernel at the same time (that would cost the
time twice and race on the cache's index files). A helper started with
``background=True`` runs at a lower priority: it takes only a core this
process leaves idle. A helper can save time, never change a result: if it
fails, or its problem's types differ from the real one's, this process
compiles what is missing itself.

What the helper runs is named by a *workload* of :mod:`skcrf._warm_up`, run
as ``python -m skcrf._warm_up <workload> [args]``.
"""

import atexit
import os
import subprocess
import sys

from numba.core import event

__all__ = ["start", "wait", "running", "cache_is_cold"]

# waiting longer than this for a helper means something is wrong with it:
# this process then compiles on its own
_TIMEOUT = 600.0

# the event a wait is wrapped in, so that skcrf._compile_notice's listener
# counts waiting for a helper as compiling (it says so past ~2 s)
WAIT_EVENT = "skcrf:compile-wait"

# stage -> the helper process compiling it
_helpers = {}

#: set by skcrf._warm_up (``skcrf compile``) while it runs: the kernels of the
#: rare paths, which run only for the inputs that need them (the
#: underflow-safe forward-backward: the objective's _deferred_terms, the
#: marginals' _marginals_log), are then called with nothing to do, so that
#: they are compiled (and cached) beside the kernels of the common path
RARE_PATHS = False


def cache_is_cold():
    """Whether Numba's cache, writable, holds no compiled objective kernel: a
    first run (or a first run after the cache was cleared)."""
    from .objective import _objective_chunk

    try:
        cache = _objective_chunk._cache
        index, folder = cache._cache_file._index_path, cache._cache_path
    except AttributeError:
        # caching off (NUMBA_DISABLE_JIT, no cache directory), or Numba's
        # cache internals changed: no helper, as before it existed
        return False
    # (a cache this process cannot write, a helper cannot fill either)
    return not os.path.exists(index) and os.access(folder, os.W_OK)


def start(workload, *args, stage="fit", background=False):
    """Spawn a helper that compiles ``workload``'s kernels for ``stage``, if
    the cache is cold and no helper runs for that stage yet. Returns whether
    one was started."""
    if stage in _helpers or not cache_is_cold():
        return False
    # the helper imports this very skcrf, wherever it was imported from
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYTHONPATH=root if not path else root + os.pathsep + path)
    cmd = [sys.executable, "-m", "skcrf._warm_up", str(workload), *map(str, args)]
    if background:
        cmd.append("--background")
    try:
        helper = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return False
    if not _helpers:
        atexit.register(_stop)
    _helpers[stage] = helper
    return True


def running(stage):
    """Whether the helper of ``stage`` is still compiling (started, not
    finished, not waited for)."""
    helper = _helpers.get(stage)
    return helper is not None and helper.poll() is None


def wait(stage=None):
    """Wait for the helper of ``stage`` (None: every helper) to finish;
    returns at once if none runs. Interrupted (Ctrl-C) or past the timeout,
    the helper is stopped."""
    for name in [stage] if stage is not None else list(_helpers):
        helper = _helpers.pop(name, None)
        if helper is None:
            continue
        try:
            if helper.poll() is None:
                with event.trigger_event(WAIT_EVENT):
                    helper.wait(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        finally:
            _kill(helper)


def _stop():
    """At exit: a helper still running (this process ended before it needed
    the kernels, e.g. on an input error) is stopped, not left behind."""
    while _helpers:
        _kill(_helpers.popitem()[1])


def _kill(helper):
    if helper.poll() is None:
        helper.kill()
        helper.wait()
