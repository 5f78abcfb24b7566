"""Exact k-best Viterbi: the k highest-scoring label paths of every
sequence, ties broken deterministically (label order, from the last token
backwards).
"""

import numpy as np
from numba import njit, prange

from ._jit import _JIT
from .emissions import _emissions
from .forward_backward import _max_length


@njit(**_JIT)
def _insert_topk(scores, labs, ranks, n, k, v, lab, rank):
    """Insert candidate (v, lab, rank) into the sorted top-k lists of length n.

    Strict comparison: among equal scores the earlier candidate (smaller
    label, then smaller rank) stays ahead, so ties are broken deterministically.
    Returns the new length.
    """
    if v == -np.inf or (n == k and not v > scores[k - 1]):
        return n
    pos = n if n < k else k - 1
    while pos > 0 and v > scores[pos - 1]:
        if pos < k:
            scores[pos] = scores[pos - 1]
            labs[pos] = labs[pos - 1]
            ranks[pos] = ranks[pos - 1]
        pos -= 1
    scores[pos] = v
    labs[pos] = lab
    ranks[pos] = rank
    return min(n + 1, k)


@njit(**_JIT)
def _topk_chunk(c, bounds, indptr, indices, data, offsets, W, A, start, end, k,
                out_paths, out_scores, out_count):
    """The k highest-scoring label sequences of the sequences of chunk ``c``.

    ``out_paths[t, r]`` is the label at token row t of the r-th best path,
    ``out_scores[s, r]`` its score, ``out_count[s]`` how many finite-score
    paths exist (at most k; 0 when no path is allowed).
    """
    lo, hi = bounds[c], bounds[c + 1]
    L = W.shape[1]
    maxT = _max_length(lo, hi, offsets)
    E = np.empty((maxT, L))
    sc = np.full((maxT, L, k), -np.inf)
    bl = np.zeros((maxT, L, k), dtype=np.int32)
    br = np.zeros((maxT, L, k), dtype=np.int32)
    cnt = np.zeros((maxT, L), dtype=np.int32)
    fs = np.empty(k)
    fl = np.zeros(k, dtype=np.int32)
    fr = np.zeros(k, dtype=np.int32)
    for s in range(lo, hi):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        if T == 0:
            out_count[s] = 1  # the empty path
            out_scores[s, 0] = 0.0
            continue
        _emissions(indptr, indices, data, t0, T, W, E)
        for j in range(L):
            v = E[0, j] + start[j]
            cnt[0, j] = 0
            if v > -np.inf:
                sc[0, j, 0] = v
                cnt[0, j] = 1
        for t in range(1, T):
            for j in range(L):
                n = 0
                for i in range(L):
                    a = A[i, j]
                    for r in range(cnt[t - 1, i]):
                        n = _insert_topk(sc[t, j], bl[t, j], br[t, j], n, k,
                                         sc[t - 1, i, r] + a, i, r)
                cnt[t, j] = n
                for r in range(n):
                    sc[t, j, r] += E[t, j]
        n = 0
        for j in range(L):
            for r in range(cnt[T - 1, j]):
                n = _insert_topk(fs, fl, fr, n, k, sc[T - 1, j, r] + end[j], j, r)
        out_count[s] = n
        for q in range(n):
            out_scores[s, q] = fs[q]
            lab, rank = fl[q], fr[q]
            for t in range(T - 1, -1, -1):
                out_paths[t0 + t, q] = lab
                lab, rank = bl[t, lab, rank], br[t, lab, rank]


@njit(parallel=True, **_JIT)
def _topk_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _topk_chunk(c, bounds, *args)  # noqa: E701
