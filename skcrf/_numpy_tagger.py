"""Tagging without Numba: window-template keys, vocabulary lookup, Viterbi in NumPy.

Importing Numba and loading its first cached function costs about 0.9 s in
a fresh process, more than tagging a few sentences takes. This module does
what ``skcrf tag`` needs for small inputs with NumPy alone, vectorised over
tokens and sequences (the only Python loops run over templates, template
parts and time steps), and gives the *same* keys, columns, label paths and
scores as the Numba kernels: the same hash (:func:`splitmix`), the same
summation order of the emission scores, the same first-maximum tie-break.
``tests/test_numpy_tagger.py`` checks that equality.

Used by :meth:`skcrf._model_io.Model.predict` for a model's first
:data:`MAX_TOKENS` tokens when every template is a window template (CRF++
``U`` lines, the ``ner`` and ``chunk`` presets); past that, and for
marginals, k-best and the word-segmentation templates, the Numba kernels.
"""

import numpy as np

from ._arrays import KernelArrays, raise_if_no_path
from ._units import (ABSENT, MAX_OFFSET, PAD, SPLITMIX_GOLD, SPLITMIX_M1,
                     SPLITMIX_M2)

__all__ = ["splitmix", "window_keys", "SortedVocabulary", "emissions", "viterbi",
           "marginals", "MAX_TOKENS"]

#: a model tags its first this many tokens with NumPy when it can: below
#: that, Numba's ~0.8 s start-up costs more than NumPy's lower throughput
#: saves (``benchmarks/bench_cli_startup.py`` measures the crossover: 0.2M to
#: 0.8M tokens of CoNLL-2002 with the tutorial template, by run; the smaller
#: figure is used, as NumPy's Viterbi loses ground with many labels)
MAX_TOKENS = 200_000

_M1, _M2, _GOLD = np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2), np.uint64(SPLITMIX_GOLD)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)


def splitmix(x):
    """SplitMix64 finaliser of a uint64 array (wrapping arithmetic), as
    ``skcrf._feature_hashing._splitmix``."""
    x = x + _GOLD
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


def _positions(offsets):
    """Sequence index, length and position within it of every token."""
    lengths = np.diff(offsets)
    seq = np.repeat(np.arange(lengths.size), lengths)
    pos = np.arange(int(offsets[-1]), dtype=np.int64) - offsets[:-1][seq]
    return seq, lengths[seq], pos


def window_keys(sources, offsets, part_src, part_off, tid):
    """Keys of one window template, (n_tokens,) uint64, 0 where a part reads
    ABSENT: what ``_feature_hashing.window_keys`` writes into its slot."""
    n = int(offsets[-1])
    with np.errstate(over="ignore"):
        h = np.full(n, splitmix(np.array([tid], dtype=np.uint64))[0], dtype=np.uint64)
        if n == 0:
            return h
        seq, T, pos = _positions(offsets)
        start = offsets[:-1][seq]
        absent = np.zeros(n, dtype=bool)
        for src, off in zip(part_src.tolist(), part_off.tolist()):
            p = pos + off
            inside = np.clip(start + p, 0, n - 1)
            u = np.where(p < 0, PAD - p,
                         np.where(p >= T, PAD + MAX_OFFSET + (p - T + 1),
                                  sources[src][inside]))
            absent |= u == ABSENT
            h = splitmix(h ^ u.astype(np.uint64))
    h[h == 0] = 1
    h[absent] = 0
    return h


class SortedVocabulary:
    """Feature keys -> columns by binary search (no hash table to build)."""

    def __init__(self, vocab_keys):
        self.order = np.argsort(vocab_keys, kind="stable")
        self.sorted = vocab_keys[self.order]

    def csr(self, keys):
        """CSR ``(indptr, indices)`` of the known keys of each row of ``keys``
        (n_rows, n_slots), in slot order: as ``_feature_hashing.keys_to_csr``."""
        n_rows = keys.shape[0]
        flat = keys.reshape(-1)
        if self.sorted.size:
            where = np.minimum(np.searchsorted(self.sorted, flat), self.sorted.size - 1)
            known = (flat != 0) & (self.sorted[where] == flat)
        else:
            where = np.zeros(flat.size, dtype=np.int64)
            known = np.zeros(flat.size, dtype=bool)
        indices = self.order[where[known]].astype(np.int32)
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(known.reshape(n_rows, -1).sum(axis=1), out=indptr[1:])
        return indptr, indices


def emissions(indptr, indices, data, W):
    """``E[t] = sum of data * W[f]`` over token t's non-zeros, added in the
    order the Numba kernel (``skcrf._kernels._emissions``) adds them, so the
    sums are bit-identical, with one vectorised step per feature rank (every
    token's first features, then its second, ...); a token with fewer
    features adds exact zeros. The kernel's order depends on the row width:

    * 4 to 16 labels (rows read as quads): binary features (``data`` one
      value) go to two sums, the even ranks' and the odd ranks', added at
      the end; valued features go to one sum in rank order (the kernel fuses
      each multiply-add: the same bits when the products are exact, e.g.
      values of 1);
    * other widths: each pair of ranks' products is added to the sum at once.
    """
    n, L = indptr.size - 1, W.shape[1]
    E = np.zeros((n, L))
    counts = np.diff(indptr)
    K = int(counts.max()) if n else 0
    if K == 0:
        return E
    rank = np.arange(indices.size) - np.repeat(indptr[:-1], counts)
    tok = np.repeat(np.arange(n), counts)
    K += K % 2
    cols = np.zeros((K, n), dtype=np.int64)          # padding reads row 0 times 0.0
    vals = np.zeros((K, n))
    cols[rank, tok] = indices
    vals[rank, tok] = data
    quads = 4 <= L <= 16          # (skcrf._kernels._read_quad_count)
    if quads and data.size != indices.size:
        odd = np.zeros((n, L))
        for k in range(0, K, 2):
            E += vals[k, :, None] * W[cols[k]]
            odd += vals[k + 1, :, None] * W[cols[k + 1]]
        E += odd
    elif quads:
        for k in range(K):
            E += vals[k, :, None] * W[cols[k]]
    else:
        for k in range(0, K, 2):
            E += vals[k, :, None] * W[cols[k]] + vals[k + 1, :, None] * W[cols[k + 1]]
    return E


class _Packed:
    """Sequences sorted longest first and packed time-major (all first
    tokens, then all second tokens, ...), so that each time step is one
    vectorised operation over the sequences still running.

    ``rank`` of a sequence is its place in that order; ``seq``, the
    sequence of every token (in token order); ``running[t]``, how
    many sequences are longer than t (always a prefix of the ranks);
    ``step0[t]``, the packed row of the first token at step t; ``packed``,
    the packed row of every token; ``last``, the packed row of each running
    rank's last token; ``order[r]``, the sequence of rank r.
    """

    def __init__(self, offsets):
        lengths = np.diff(offsets)
        self.order = np.argsort(-lengths, kind="stable")
        rank = np.empty_like(self.order)
        rank[self.order] = np.arange(self.order.size)
        sorted_len = lengths[self.order]
        self.max_t = int(sorted_len[0]) if sorted_len.size else 0
        self.running = sorted_len.size - np.searchsorted(
            sorted_len[::-1], np.arange(self.max_t), side="right")
        self.step0 = np.zeros(self.max_t + 1, dtype=np.int64)
        np.cumsum(self.running, out=self.step0[1:])
        self.seq, _, pos = _positions(offsets)            # of every token
        self.packed = self.step0[pos] + rank[self.seq]
        self.n_run = int(self.running[0]) if self.max_t else 0
        self.last = self.step0[sorted_len[:self.n_run] - 1] + np.arange(self.n_run)

    def rows(self, t, m=None):
        """Packed rows of step t (its first ``m`` ranks)."""
        a = int(self.step0[t])
        return slice(a, a + int(self.running[t] if m is None else m))

    def pack(self, E):
        out = np.empty_like(E)
        out[self.packed] = E
        return out


def viterbi(arrays, weights):
    """Best label path of every sequence: ``(labels per token, scores)`` as
    :func:`skcrf._inference.viterbi` returns them (one vectorised step per
    position over the sequences still running, see :class:`_Packed`)."""
    arrays = KernelArrays(*arrays)
    offsets, n = arrays.offsets, arrays.n_tokens
    W, A, start, end = weights
    lengths = np.diff(offsets)
    out = np.zeros(n, dtype=np.int64)
    best = np.zeros(lengths.size)
    if n == 0:
        return out, best
    pk = _Packed(offsets)
    Ep = pk.pack(emissions(arrays.indptr, arrays.indices, arrays.data, W))
    score = np.empty_like(Ep)
    back = np.zeros(Ep.shape, dtype=np.int64)
    score[pk.rows(0)] = Ep[pk.rows(0)] + start
    for t in range(1, pk.max_t):
        m, now = pk.running[t], pk.rows(t)
        cand = score[pk.rows(t - 1, m), :, None] + A
        arg = cand.argmax(axis=1)
        back[now] = arg
        score[now] = np.take_along_axis(cand, arg[:, None, :], axis=1)[:, 0, :] + Ep[now]
    n_run = pk.n_run                                     # non-empty sequences
    final = score[pk.last] + end
    last = final.argmax(axis=1)
    best[pk.order[:n_run]] = final[np.arange(n_run), last]
    raise_if_no_path(np.isneginf(best), offsets)
    labels = np.empty(n, dtype=np.int64)
    cur = np.zeros(n_run, dtype=np.int64)
    for t in range(pk.max_t - 1, -1, -1):
        m = int(pk.running[t])
        ending = slice(int(pk.running[t + 1]) if t + 1 < pk.max_t else 0, m)
        cur[ending] = last[ending]                       # sequences whose last token is t
        rows = pk.step0[t] + np.arange(m)
        labels[rows] = cur[:m]
        if t:
            cur[:m] = back[rows, cur[:m]]
    out[:] = labels[pk.packed]
    return out, best


def _logsumexp(a, axis):
    m = a.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return (np.log(np.exp(a - m).sum(axis=axis, keepdims=True)) + m).squeeze(axis)


def marginals(arrays, weights):
    """Node marginals and log Z of every sequence, ``(P, log_z)`` as
    :func:`skcrf._inference.marginals` returns them (equal to rounding: this
    runs forward-backward in log space, the kernels in scaled probability
    space). For the probabilities ``skcrf tag -v1`` prints."""
    arrays = KernelArrays(*arrays)
    offsets, n = arrays.offsets, arrays.n_tokens
    W, A, start, end = weights
    L = A.shape[0]
    log_z = np.zeros(offsets.size - 1)
    if n == 0:
        return np.zeros((0, L)), log_z
    pk = _Packed(offsets)
    Ep = pk.pack(emissions(arrays.indptr, arrays.indices, arrays.data, W))
    la = np.empty_like(Ep)                               # log forward
    lb = np.empty_like(Ep)                               # log backward
    la[pk.rows(0)] = Ep[pk.rows(0)] + start
    for t in range(1, pk.max_t):
        m = pk.running[t]
        la[pk.rows(t)] = _logsumexp(la[pk.rows(t - 1, m), :, None] + A, axis=1) \
            + Ep[pk.rows(t)]
    for t in range(pk.max_t - 1, -1, -1):
        m = int(pk.running[t])
        going = int(pk.running[t + 1]) if t + 1 < pk.max_t else 0
        now = pk.step0[t]
        lb[now + going:now + m] = end                    # last tokens
        if going:
            nxt = Ep[pk.rows(t + 1)] + lb[pk.rows(t + 1)]
            lb[now:now + going] = _logsumexp(A + nxt[:, None, :], axis=2)
    final = _logsumexp(la[pk.last] + end, axis=1)
    log_z[pk.order[:pk.n_run]] = final
    raise_if_no_path(np.isneginf(log_z), offsets)
    with np.errstate(invalid="ignore"):
        P = np.exp(la[pk.packed] + lb[pk.packed] - log_z[pk.seq][:, None])
    return P, log_z
