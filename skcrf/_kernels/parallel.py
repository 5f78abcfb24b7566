"""Threads: how many, how work is split, and the one place that picks serial or parallel.

Every compiled pass over sequences (objective, Viterbi, marginals, top-k)
is written as a *chunk kernel* ``chunk(c, bounds, *args)`` that processes
sequences ``bounds[c]:bounds[c + 1]``, plus a three-line ``prange`` driver
``parallel(bounds, *args)`` that runs every chunk on Numba's thread pool.
:func:`run_chunks` calls the chunk kernel directly when there is one chunk
(so ``n_jobs=1`` never touches the threading layer) and the driver inside a
:func:`numba_threads` scope otherwise.
"""

import sys
from contextlib import contextmanager

import numba
import numpy as np

__all__ = ["resolve_n_threads", "numba_threads", "chunk_bounds", "element_bounds", "run_chunks",
           "order_by_length"]


def resolve_n_threads(n_jobs):
    """Threads for the kernels: ``None`` -> 1, ``-1`` -> all cores Numba may use.

    Never more than Numba's pool (``NUMBA_NUM_THREADS``), which joblib caps
    at ``cores // n_workers`` inside the workers of a parallel search: so a
    CRF with ``n_jobs=-1`` inside ``GridSearchCV(n_jobs=k)`` does not
    oversubscribe the cores. Inside a Dask worker, never more than the
    worker's threads.
    """
    from joblib import effective_n_jobs

    cap = _dask_worker_threads()
    if n_jobs is None:
        n = 1
    elif cap is not None:
        # a Dask worker: -1 is all of the worker's threads (joblib would see
        # a daemon process and say 1, with a warning)
        n = max(1, cap + 1 + n_jobs) if n_jobs < 0 else min(n_jobs, cap)
    else:
        n = effective_n_jobs(n_jobs)
    return max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))


def _dask_worker_threads():
    """The thread count of the Dask worker running this task, or None.

    A task on a worker with k threads may use k kernel threads at most, so a
    search under ``joblib.parallel_config(backend="dask")`` does not
    oversubscribe the worker's cores."""
    if "distributed" not in sys.modules:
        return None
    try:
        from distributed import get_worker

        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return None


@contextmanager
def numba_threads(n):
    """Let Numba's parallel kernels use ``n`` threads inside the block."""
    n = max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))
    old = numba.get_num_threads()
    if n == old:
        yield
        return
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(old)


def chunk_bounds(offsets, indptr, n_labels, n_chunks):
    """Split sequences into ``n_chunks`` contiguous ranges of similar cost.

    The cost of a sequence is its number of non-zeros times the number of
    labels (emissions and state gradient) plus its length times the number of
    labels squared (the recursions).

    Returns
    -------
    bounds : ndarray of int64, shape (n_chunks_used + 1,)
        Chunk ``c`` holds sequences ``bounds[c]:bounds[c + 1]``; never an
        empty chunk, except the single chunk of an empty input.
    """
    n_seq = offsets.size - 1
    n_chunks = max(1, min(int(n_chunks), n_seq))
    if n_chunks == 1:
        return np.array([0, n_seq], dtype=np.int64)
    cost = (indptr[offsets[1:]] - indptr[offsets[:-1]]) * n_labels + \
        (offsets[1:] - offsets[:-1]) * n_labels * n_labels + 1
    cum = np.concatenate([[0], np.cumsum(cost, dtype=np.float64)])
    targets = cum[-1] * np.arange(1, n_chunks) / n_chunks
    inner = np.searchsorted(cum, targets)
    return np.unique(np.concatenate([[0], inner, [n_seq]])).astype(np.int64)


#: the fewest elements of a vector that :func:`element_bounds` gives a thread
ELEMENT_BLOCK = 2048


def element_bounds(n, n_threads, block=ELEMENT_BLOCK):
    """Split the elements ``0:n`` of a vector into at most ``n_threads``
    contiguous ranges for the element-wise chunk kernels (L-BFGS's passes,
    the parameter vector's): edges on multiples of ``block`` elements, so
    that no two threads write to one cache line, and no range smaller than
    a block.

    Returns
    -------
    bounds : ndarray of int64
        Chunk ``c`` holds elements ``bounds[c]:bounds[c + 1]``; one empty
        chunk when ``n`` is 0.
    """
    if n <= 0:
        return np.zeros(2, dtype=np.int64)
    n_chunks = max(1, min(int(n_threads), n // block + 1))
    edges = np.round(np.linspace(0, n / block, n_chunks + 1)).astype(np.int64) * block
    edges[-1] = n
    return np.unique(edges)


def run_chunks(chunk, parallel, bounds, n_threads, *args):
    """Run ``chunk(c, bounds, *args)`` for every chunk: serially when there is
    one chunk, else through the ``parallel(bounds, *args)`` driver on
    ``n_threads`` threads."""
    if bounds.size <= 2:
        chunk(0, bounds, *args)
    else:
        with numba_threads(n_threads):
            parallel(bounds, *args)


def order_by_length(offsets, edges, window=None):
    """The order in which the chunk kernels that run sequences side by side
    in SIMD lanes (training's forward-backward, Viterbi) visit them.

    Each range ``edges[r]:edges[r + 1]`` of sequences (``edges`` sorted, from
    0 to n_sequences) cut into windows of ``window`` consecutive sequences,
    each window's sequences ordered by length (stably)."""
    window = LANE_WINDOW if window is None else window
    n = offsets.size - 1
    lengths = np.diff(offsets)
    seq = np.arange(n)
    part = np.searchsorted(edges, seq, side="right")
    first = np.asarray(edges)[np.maximum(part - 1, 0)]
    return np.lexsort((lengths, (seq - first) // window, part)).astype(np.int64)


#: how many consecutive sequences are ordered by length together, so that the
#: batches of N_LANES that run side by side (K._lane_posteriors) have similar
#: lengths (little padding) while the sequences stay near their neighbours
#: in the data, whose features they share (the weight rows stay in cache)
LANE_WINDOW = 128
