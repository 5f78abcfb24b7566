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

What the helper runs is named by a *workload* of :mod:`skcrf._warm_up`
(:data:`skcrf._warm_up.WORKLOADS`), with what this process compiles itself
while it waits for that helper (for the fit: the optimiser's kernels, while
the helper compiles the objective's), so that the two share the compiling.
On Linux, with no other thread running, the helper is forked from this
process: it starts with this process's imports instead of spending a
second of CPU redoing them (elsewhere, or with threads running, where a fork
is not safe: a new interpreter, ``python -m skcrf._warm_up <workload>
[args]``).
"""

import atexit
import os
import signal
import subprocess
import sys
import time

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
# stage -> what this process compiles while waiting for that stage's helper
_meanwhile = {}

#: set by skcrf._warm_up (``skcrf compile``) while it runs: the kernels of the
#: rare paths, which run only for the inputs that need them (the
#: underflow-safe forward-backward: the objective's _deferred_terms, the
#: marginals' _marginals_listed), are then called with nothing to do, so that
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


def start(workload, *args, stage="fit", background=False, run=None, meanwhile=None):
    """Start a helper that compiles ``workload``'s kernels for ``stage``, if
    the cache is cold and no helper runs for that stage yet. Returns whether
    one was started.

    ``run`` is the workload's function (``run(n_jobs)``, for a forked helper;
    None: always a new interpreter), ``meanwhile`` what this process compiles
    itself while it waits for the helper (``meanwhile(n_jobs)``, or None):
    :func:`skcrf._warm_up.start_helper` passes both."""
    if stage in _helpers or not cache_is_cold():
        return False
    helper = _fork(run, args, background) if run is not None else None
    if helper is None:
        # the helper imports this very skcrf, wherever it was imported from
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        path = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=root if not path else root + os.pathsep + path)
        cmd = [sys.executable, "-m", "skcrf._warm_up", str(workload), *map(str, args)]
        if background:
            cmd.append("--background")
        try:
            helper = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=env)
        except OSError:
            return False
    if not _helpers:
        atexit.register(_stop)
    _helpers[stage] = helper
    if meanwhile is not None:
        _meanwhile[stage] = lambda: meanwhile(_n_jobs(args))
    return True


def _n_jobs(args):
    """The workloads' one argument, ``n_jobs`` (None, or an int as text)."""
    return None if not args or args[0] in (None, "None") else int(args[0])


def _fork(run, args, background):
    """Fork a helper that runs ``run(n_jobs)`` and exits; None where forking
    is not safe: not Linux (macOS's system libraries do not survive a fork
    without exec), or threads running (a lock one of them holds would stay
    held in the child forever)."""
    import threading

    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return None
    try:
        import numba.np.ufunc.parallel as threading_layer

        if threading_layer._is_initialized:    # Numba's worker threads started
            return None
    except (ImportError, AttributeError):
        return None
    import warnings

    try:
        with warnings.catch_warnings():
            # (Python 3.12+ warns of threads it cannot see to be idle: BLAS's,
            # which wait on a condition and are fork-safe)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        return None
    if pid:
        return _Forked(pid)
    # the child: no output, none of this process's helpers or exit handlers
    status = 1
    try:
        _helpers.clear()
        _meanwhile.clear()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if background and hasattr(os, "nice"):
            os.nice(10)
        run(_n_jobs(args))
        status = 0
    finally:
        os._exit(status)


class _Forked:
    """A forked helper, with what this module uses of ``subprocess.Popen``."""

    def __init__(self, pid):
        self.pid = pid
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"helper {self.pid}", timeout)
            time.sleep(0.01)
        return self.returncode

    def kill(self):
        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:   # (it ended meanwhile)
                pass


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
        meanwhile = _meanwhile.pop(name, None)
        if helper is None:
            continue
        try:
            if helper.poll() is None:
                with event.trigger_event(WAIT_EVENT):
                    if meanwhile is not None:
                        _share(meanwhile)
                    helper.wait(timeout=_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        finally:
            _kill(helper)


def _share(meanwhile):
    """This process's share of the compiling, while the helper does the rest.
    Like the helper's, it can save time, never change a result: if it fails,
    the fit compiles what is missing when it gets there."""
    try:
        meanwhile()
    except Exception:       # (not KeyboardInterrupt: Ctrl-C still stops)
        pass


def _stop():
    """At exit: a helper still running (this process ended before it needed
    the kernels, e.g. on an input error) is stopped, not left behind."""
    _meanwhile.clear()
    while _helpers:
        _kill(_helpers.popitem()[1])


def _kill(helper):
    if helper.poll() is None:
        helper.kill()
        helper.wait()
