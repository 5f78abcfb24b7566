"""Say once, while Numba compiles for more than ~2 s, that it is doing so.

A first use of skcrf (or the first fit of a new problem shape) spends tens of
seconds in Numba's compiler before anything else happens; without a word, a
user cannot tell compiling from hanging. Numba announces every real
compilation with a ``numba:compile`` event (a kernel loaded from the disk
cache is not one), so a listener that sums the time spent inside those events
knows when compiling, not training, is what takes the time. Waiting for a
helper process that compiles kernels ahead (:mod:`skcrf._kernels.compile_helper`)
counts as compiling too.

The listener is registered while :func:`compile_notice` is active (the
command line, ``verbose`` fits): it logs one line to the ``skcrf`` logger at
INFO level and, when given a stream, writes it there too — once per process,
since afterwards the kernels come from the cache. The log line and the
printed line are said once each, apart: blocks nest (``skcrf demo`` prints to
stderr around a quiet ``WordSegmenter.fit``), and the inner block's log line
must not keep the outer block's stream silent.
"""

import contextlib
import logging
import threading
import time

__all__ = ["compile_notice", "MESSAGE"]

logger = logging.getLogger("skcrf")

MESSAGE = ("skcrf: compiling the Numba kernels for this problem (first use only: "
           "later runs load them from Numba's cache) ...")

# Numba's compilations, and this process waiting for a helper process that
# compiles kernels ahead (skcrf._kernels.compile_helper.WAIT_EVENT)
_KINDS = ("numba:compile", "skcrf:compile-wait")

# compiling for longer than this (summed over kernels) is worth a word
_THRESHOLD = 2.0

_lock = threading.Lock()
# what has been said in this process: "log" and / or "stream"
_said = set()


class _Notice:
    """Sums the wall time of the outermost ``numba:compile`` events (a kernel
    compiles the kernels it calls inside its own event) and announces when the
    sum passes the threshold, from a timer while a long compilation runs."""

    def __init__(self, stream):
        self.stream = stream
        self.depth = 0
        self.spent = 0.0
        self.started = 0.0
        self.timer = None

    def on_start(self, event):
        self.depth += 1
        if self.depth == 1:
            self.started = time.perf_counter()
            self.timer = threading.Timer(max(0.0, _THRESHOLD - self.spent), self.announce)
            self.timer.daemon = True
            self.timer.start()

    def on_end(self, event):
        self.depth = max(0, self.depth - 1)
        if self.depth == 0:
            self.spent += time.perf_counter() - self.started
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if self.spent >= _THRESHOLD:
                self.announce()

    def announce(self):
        with _lock:
            log = "log" not in _said
            show = self.stream is not None and "stream" not in _said
            if log:
                _said.add("log")
            if show:
                _said.add("stream")
        if log:
            logger.info(MESSAGE)
        if show:
            try:
                print(MESSAGE, file=self.stream, flush=True)
            except (OSError, ValueError):     # a closed stream: the log line remains
                pass

    def stop(self):
        if self.timer is not None:
            self.timer.cancel()


@contextlib.contextmanager
def compile_notice(stream=None):
    """While active, announce a compilation of more than ~2 s once per process
    (``logging.getLogger("skcrf")`` at INFO, and ``stream`` if given)."""
    try:
        from numba.core import event
    except ImportError:                       # the NumPy-only runtime never compiles
        yield
        return
    # a subclass made here: numba is imported only by callers that compile
    listener = type("_Listener", (_Notice, event.Listener), {})(stream)
    for kind in _KINDS:
        event.register(kind, listener)
    try:
        yield
    finally:
        for kind in _KINDS:
            event.unregister(kind, listener)
        listener.stop()
