"""The NumPy inference engine: Viterbi and marginals without Numba.

Importing Numba and loading its first cached function costs about a second
in a fresh process, more than tagging a few sentences takes. This engine
does what ``skcrf tag`` needs for small inputs with NumPy alone, vectorised
over tokens and sequences (the only Python loops run over feature ranks and
time steps), and gives the *same* label paths and scores as the compiled
kernels: the same summation order of the emission scores, the same
first-maximum tie-break (``tests/test_numpy_inference.py``). Marginals agree
to rounding (log space here, scaled probability space there).

Used through :mod:`skcrf._inference` (engine ``"numpy"``); the model files'
runtime picks it for a model's first :data:`MAX_TOKENS` tokens.
"""

import numpy as np

from ._arrays import KernelArrays, raise_if_no_path, token_positions

#: a model tags its first this many tokens with NumPy when it can: below
#: that, Numba's ~0.8 s start-up costs more than NumPy's lower throughput
#: saves (``benchmarks/claims/bench_cli_startup.py`` measures the crossover: 0.2M to
#: 0.8M tokens of CoNLL-2002 with the tutorial template, by run; the smaller
#: figure is used, as NumPy's Viterbi loses ground with many labels)
MAX_TOKENS = 200_000


def emissions(indptr, indices, data, W):
    """``E[t] = sum of data * W[f]`` over token t's non-zeros, added in the
    order the Numba kernel (``skcrf._kernels.emissions._emissions``) adds them, so the
    sums are bit-identical, with one vectorised step per feature rank (every
    token's first features, then its second, ...); a token with fewer
    features adds exact zeros. The kernel's order depends on the row width:

    * 4 labels or more, binary features (``data`` one value): two sums, the
      even ranks' and the odd ranks', added at the end;
    * 4 to 16 labels (rows read as quads), valued features: one sum in rank
      order (the kernel fuses each multiply-add: the same bits when the
      products are exact, e.g. values of 1);
    * more than 16 labels, valued features: one rank at a time, multiply and
      add rounded apart;
    * 1 to 3 labels: each pair of ranks' products is added to the sum at once.
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
    # (quad rows: 4-16 labels, skcrf._kernels.emissions._read_quad_count;
    # wider ones: _emissions_wide)
    if L >= 4 and data.size != indices.size:
        odd = np.zeros((n, L))
        for k in range(0, K, 2):
            E += vals[k, :, None] * W[cols[k]]
            odd += vals[k + 1, :, None] * W[cols[k + 1]]
        E += odd
    elif L >= 4:
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
        self.seq, _, pos = token_positions(offsets)            # of every token
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


def viterbi(arrays, weights, n_threads=1):
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


def marginals(arrays, weights, n_threads=1):
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
