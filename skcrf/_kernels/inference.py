"""The compiled inference engine: Viterbi, marginals with log Z, exact
k-best and path scores over :class:`~skcrf._arrays.KernelArrays` and
:class:`~skcrf._arrays.Weights`, on ``n_threads`` threads.

Called through :mod:`skcrf._inference` (which also has the NumPy engine),
never directly by estimators or model files.
"""

import numpy as np

from .._arrays import ONE, KernelArrays, raise_if_no_path
from . import compile_helper
from .csr_check import check_csr
from .decode import (
    _marginals_chunk,
    _marginals_listed,
    _marginals_parallel,
    _path_scores_chunk,
    _path_scores_parallel,
    _viterbi_chunk,
    _viterbi_listed,
    _viterbi_one,
    _viterbi_parallel,
)
from .decode_pruned import (
    PRUNE_MIN_LABELS,
    SEQUENCE_PRUNE_MIN_LABELS,
    _viterbi_one_pruned,
    _viterbi_pruned_chunk,
    _viterbi_pruned_parallel,
    _viterbi_table,
)
from .emissions import quad_rows
from .parallel import chunk_bounds, order_by_length, run_chunks
from .topk import _topk_chunk, _topk_parallel


def exp_transitions(A, start, end):
    """Shifted exponentials of the transition, start and end weights.

    Returns ``expA, exp_start, exp_end, shifts`` with
    ``shifts = (start_shift, end_shift, transition_shift)`` the maxima that were
    subtracted before ``exp`` (so large weights cannot overflow).
    """
    def shifted(a):
        finite = a[np.isfinite(a)]
        m = float(finite.max()) if finite.size else 0.0
        return np.exp(a - m), m  # exp(-inf) = 0: a forbidden transition

    expA, sa = shifted(A)
    exp_start, ss = shifted(start)
    exp_end, se = shifted(end)
    return expA, exp_start, exp_end, np.array([ss, se, sa])


def _kernel_weights(weights):
    """``weights`` with W as Viterbi and the marginals take it: rows of 4-16
    labels as quad rows (:func:`skcrf._kernels.emissions.quad_rows`), whose
    kernels hold only the emission loop for such rows."""
    return weights._replace(W=quad_rows(weights.W))


def _bounds(arrays, n_labels, n_threads):
    return chunk_bounds(arrays.offsets, arrays.indptr, n_labels, n_threads)


def _decodes_pruned(weights):
    """Whether Viterbi takes the pruned kernels (a separate compilation,
    which models of few labels never pay): many labels, and some previous
    label whose transitions are all allowed. The bound's floor comes from
    such labels only; where every label forbids some transition (BIOES
    constraints do), it is -inf, and the pruned step would keep every label
    at the cost of the bound's passes."""
    return (weights.n_labels >= PRUNE_MIN_LABELS
            and bool(np.isfinite(weights.A).all(axis=1).any()))


def viterbi(arrays, weights, n_threads=1, bounds=None):
    """Most probable label path of every sequence.

    Returns
    -------
    labels : ndarray of int64, shape (n_tokens,)
        Label index of every token.
    scores : ndarray of shape (n_sequences,)
        Score of each best path (0 for an empty sequence).
    """
    out = np.zeros(arrays.n_tokens, dtype=np.int64)
    best = np.zeros(arrays.n_sequences)
    if bounds is None:
        bounds = _bounds(arrays, weights.n_labels, n_threads)
    order = order_by_length(arrays.offsets, bounds)
    pruned = _decodes_pruned(weights)
    chunk, parallel = (_viterbi_pruned_chunk, _viterbi_pruned_parallel) if pruned \
        else (_viterbi_chunk, _viterbi_parallel)
    kw = _kernel_weights(weights)
    run_chunks(chunk, parallel, bounds, n_threads, order, *arrays, *kw, out, best)
    if not pruned:
        left = np.flatnonzero(np.isnan(best))
        if left.size or compile_helper.RARE_PATHS:
            # (rare: sequences too long for the lanes; a kernel of its own)
            _viterbi_listed(left, *arrays, *kw, out, best)
    raise_if_no_path(np.isneginf(best), arrays.offsets)
    return out, best


def marginals(arrays, weights, n_threads=1, bounds=None):
    """Node marginals and log partition function of every sequence.

    Returns
    -------
    P : ndarray of shape (n_tokens, n_labels)
        P(y_t = j | x); rows sum to 1.
    log_z : ndarray of shape (n_sequences,)
        log Z(x) (0 for an empty sequence).
    """
    L = weights.n_labels
    expA, exp_start, exp_end, shifts = exp_transitions(weights.A, weights.start,
                                                       weights.end)
    P = np.zeros((arrays.n_tokens, L))
    log_z = np.zeros(arrays.n_sequences)
    if bounds is None:
        bounds = _bounds(arrays, L, n_threads)
    kw = _kernel_weights(weights)
    order = order_by_length(arrays.offsets, bounds)
    run_chunks(_marginals_chunk, _marginals_parallel, bounds, n_threads, order,
               *arrays, *kw, expA, exp_start, exp_end, shifts, P, log_z)
    left = np.flatnonzero(np.isnan(log_z))
    if left.size or compile_helper.RARE_PATHS:
        # (rare: sequences too long for the lanes, or on which the scaled
        # recursion underflowed; a kernel of its own)
        _marginals_listed(left, *arrays, *kw, expA, exp_start, exp_end, shifts, P, log_z)
    raise_if_no_path(np.isneginf(log_z), arrays.offsets)
    return P, log_z


def path_scores(arrays, weights, y, n_threads=1):
    """Score s(x, y) of the given label path of every sequence.

    ``y`` (int64, n_tokens) holds label indices. -inf for a path that uses a
    forbidden transition, 0 for an empty sequence.
    """
    out = np.zeros(arrays.n_sequences)
    bounds = _bounds(arrays, weights.n_labels, n_threads)
    run_chunks(_path_scores_chunk, _path_scores_parallel, bounds, n_threads,
               *arrays, *weights, np.ascontiguousarray(y, dtype=np.int64), out)
    return out


def topk(arrays, weights, k, n_threads=1):
    """The k highest-scoring label paths of every sequence (exact k-best Viterbi).

    Returns
    -------
    paths : ndarray of int64, shape (n_tokens, k)
        ``paths[t, r]``: label of token t on the r-th best path of its sequence.
    scores : ndarray of shape (n_sequences, k)
        Path scores, best first (-inf beyond ``count``).
    count : ndarray of int64, shape (n_sequences,)
        How many paths each sequence has (at most k).

    Among equal scores, the path whose labels come first in label order,
    compared from the last token backwards, comes first.
    """
    paths = np.zeros((arrays.n_tokens, k), dtype=np.int64)
    scores = np.full((arrays.n_sequences, k), -np.inf)
    count = np.zeros(arrays.n_sequences, dtype=np.int64)
    bounds = _bounds(arrays, weights.n_labels, n_threads)
    run_chunks(_topk_chunk, _topk_parallel, bounds, n_threads,
               *arrays, *weights, k, paths, scores, count)
    raise_if_no_path(count == 0, arrays.offsets)
    return paths, scores, count


def load_decoding(weights, decoding="viterbi", n_threads=1):
    """Call the decoding kernels a model will use on two featureless tokens:
    the serial chunk kernel, and the threaded driver too when ``n_threads``
    > 1 (a tiny input alone would never reach it), and the input check
    (:func:`skcrf._kernels.csr_check.check_csr`). Loading them from Numba's
    cache takes a tenth of a second or more; ``fit`` and ``load_model`` do it
    here so that the first ``predict`` is as fast as the next ones."""
    arrays = KernelArrays(np.zeros(3, np.int64), np.zeros(0, np.int32), ONE,
                          np.array([0, 1, 2], np.int64))
    # the input check (a fit has loaded the one of its data, a loaded model
    # not), for int32 column indices; int64 ones (scikit-learn's for very
    # large inputs) are rare: compiled ahead only by `skcrf compile`, not in
    # every cold first fit
    for dtype, out in ((np.int32, 0), (np.int64, 1))[:1 + compile_helper.RARE_PATHS]:
        check_csr(arrays.indptr, np.zeros(out, dtype), ONE, 1, np.empty(out, np.int32))
    decode = marginals if decoding == "marginal" else viterbi
    for edges in ([0, 2], [0, 1, 2])[:1 + (n_threads > 1)]:
        try:
            decode(arrays, weights, n_threads, np.array(edges, np.int64))
        except ValueError:
            pass     # constraints that allow no one-token path: predict will say so


def viterbi_table(A):
    """The transitions as the single-sequence Viterbi reads them (see
    :func:`skcrf._kernels.decode_pruned._viterbi_table`): made once per model by
    callers of :func:`viterbi_sequence`."""
    return _viterbi_table(np.ascontiguousarray(A, dtype=np.float64))


def viterbi_sequence(arrays, weights, table, work):
    """Best path of a single sequence, called straight (no chunks, no
    visiting order, no threads): for callers that tag one sequence per call,
    python-crfsuite's ``Tagger.tag`` style, where the batch drivers' set-up
    would cost more than the decoding. ``table`` is :func:`viterbi_table`
    of the model's transitions, made once by the caller; ``work`` is the
    previous call's work arrays (or None), grown here when too short.
    Returns ``(labels, score, work)``."""
    T, L = arrays.n_tokens, weights.n_labels
    if table.shape != (L + 2, L) or table.dtype != np.float64:
        raise ValueError(f"table must be viterbi_table(A) of shape {(L + 2, L)}, got "
                         f"{table.dtype} {table.shape}.")
    if work is None or work[0].shape[0] < T:
        n = max(T, 64)
        work = (np.empty((n, L)), np.empty((n, L)), np.empty((n, L + 1), dtype=np.int32))
    out = np.zeros(T, dtype=np.int64)
    best = np.zeros(1)
    if L >= SEQUENCE_PRUNE_MIN_LABELS:
        _viterbi_one_pruned(0, *arrays, *weights[:2], table, *weights[2:], *work, out, best)
    else:   # the table's first L rows are A.T, what the full step reads
        _viterbi_one(0, *arrays, *_kernel_weights(weights)[:2], table[:L], *weights[2:],
                     *work[:2], out, best)
    raise_if_no_path(np.isneginf(best), arrays.offsets)
    return out, best, work
