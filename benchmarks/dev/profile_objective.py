"""Where the time of one objective evaluation goes, and how far it is from a lower bound.

On CoNLL-2002 Spanish with the sklearn-crfsuite tutorial features (the
``bench_conll2002.py`` problem) it prints

1. featurisation: feature dicts and their vectorisation (once per fit);
2. each stage of an evaluation run alone over the whole corpus, one thread,
   with the package's own kernels: emission scores, scaled forward-backward
   (including the exp of every emission) without and with the transition pair
   marginals it accumulates on the way back, expected state counts;
3. the whole evaluation (the data term ``CRFLoss`` plus the L2 penalty) with 1
   and 2 threads;
4. the optimiser's share: a 40-iteration fit timed inside and outside the
   objective, and evaluations per iteration;
5. a lower bound: the bytes an evaluation must touch (the CSR matrix once,
   the state weights once, their gradient once) over the measured streaming
   bandwidth, and its multiply-adds over the measured peak rate (BLAS dgemm,
   one thread) — and how many times the bound the evaluation takes.

    python benchmarks/dev/profile_objective.py --data ../shared/data/conll2002
"""

import argparse
import os
import sys
import time
from datetime import date

import numpy as np
from numba import njit, prange
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, load_conll2002, machine, vectorise

from skcrf import LinearChainCRF
from skcrf._kernels import emissions as _em
from skcrf._kernels import forward_backward as _fb
from skcrf._kernels import lane_forward_backward as _lfb
from skcrf._kernels import lanes as _lanes
from skcrf._kernels import state_counts as _sc
from skcrf._kernels.inference import exp_transitions
from skcrf._kernels.lanes import row_width
from skcrf._kernels.parallel import numba_threads
from skcrf._training import loss as _objective
from skcrf._training.layout import build_layout, count_pairs
from skcrf._training.penalty import ElasticNet

_J = dict(cache=False, nogil=True, error_model="numpy")


# ---------------------------------------------------------------- stage drivers
@njit(**_J)
def _stage_emissions(indptr, indices, data, offsets, W, E):
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        _em._emissions(indptr, indices, data, t0, offsets[s + 1] - t0, W, E[t0:])


@njit(**_J)
def _stage_forward_backward(offsets, E, expA, es, ee, U, alpha, beta, scale, work,
                            w, gA):
    expAT = np.ascontiguousarray(expA.T)
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        _fb._forward_backward(E[a:b], U[a:b], expA, expAT, es, ee, alpha[a:b],
                            beta[a:b], scale[a:b], work, w, gA)


@njit(**_J)
def _stage_lanes(order, indptr, indices, data, offsets, weights, W, expA, es, ee, shifts,
                 logz):
    """Emissions and forward-backward with the pair marginals, N_LANES sequences
    at a time in SIMD lanes, in the objective's order (what fit runs)."""
    L = expA.shape[0]
    n = order.size
    maxT = _fb._max_length(0, n, offsets)
    lb = _lfb._lane_buffers(maxT, L)
    reach = _lfb._reachable(expA, es, maxT)
    gA8, gS, gE = np.zeros(L * L * _lanes.N_LANES), np.zeros(L), np.zeros(L)
    for i in range(0, n - _lanes.N_LANES + 1, _lanes.N_LANES):
        _lfb._lane_posteriors(order[i:i + _lanes.N_LANES], _lanes.N_LANES, indptr, indices,
                              data, offsets, weights, W, expA, es, ee, shifts, reach, lb, gA8,
                              gS, gE, logz)


@njit(**_J)
def _stage_state_counts(indptr, indices, data, offsets, alpha, beta, gW, work):
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        P = alpha[a:b] * beta[a:b]   # (the objective forms this in place)
        _sc._add_state_counts(indptr, indices, data, a, b - a, P, gW)


# ---------------------------------------------------------------- machine limits
@njit(**_J)
def _stream_sum(x):
    acc0 = acc1 = acc2 = acc3 = 0.0
    n = x.size - x.size % 4
    for i in range(0, n, 4):
        acc0 += x[i]
        acc1 += x[i + 1]
        acc2 += x[i + 2]
        acc3 += x[i + 3]
    return acc0 + acc1 + acc2 + acc3


@njit(parallel=True, **_J)
def _stream_sum_parallel(x, n_parts):
    part = np.zeros(n_parts)
    size = (x.size + n_parts - 1) // n_parts
    for k in prange(n_parts):
        part[k] = _stream_sum(x[k * size:min(x.size, (k + 1) * size)])
    return part.sum()


def best_of(fn, reps=5):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), float(np.median(times))


def bandwidth_gb_s(threads):
    x = np.ones(2**28)  # 2 GiB, far beyond any cache
    with numba_threads(threads):
        if threads == 1:
            t, _ = best_of(lambda: _stream_sum(x), 3)
        else:
            t, _ = best_of(lambda: _stream_sum_parallel(x, threads), 3)
    return x.nbytes / t / 1e9


def peak_madd_per_s():
    a = np.random.default_rng(0).random((2000, 2000))
    with threadpool_limits(limits=1, user_api="blas"):
        t, _ = best_of(lambda: a @ a, 3)
    return 2000.0**3 / t


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    ap.add_argument("--corpus", default=None,
                    help="a corpus of the label sweep (_corpora.py) instead of CoNLL-2002")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    print(f"# Profile of one objective evaluation, CoNLL-2002 Spanish, c2=1 — "
          f"{date.today()} — {machine()}")

    if args.corpus:
        from _corpora import build

        Xtr, trt, _, _, _ = build(args.corpus, DEFAULT_DATA, args.limit)
        print(f"corpus {args.corpus} of the label sweep")
    else:
        t = time.perf_counter()
        trf, trt, tef, _ = load_conll2002(args.data)
        t_dicts = time.perf_counter() - t
        t = time.perf_counter()
        Xtr, _ = vectorise(trf, tef)
        t_vec = time.perf_counter() - t
        del trf, tef
        print(f"featurisation (once per fit): feature dicts {t_dicts:.1f} s, "
              f"DictVectorizer (train + test) {t_vec:.1f} s")

    classes, y = np.unique(np.concatenate([np.asarray(s) for s in trt]),
                           return_inverse=True)
    y = y.astype(np.int32).reshape(-1)
    L = classes.size
    arrays, weights = Xtr.kernel_arrays(), np.ones(len(Xtr))
    counts = count_pairs(arrays, y, weights, L, Xtr.n_features)
    layout = build_layout(counts, all_possible_transitions=False, start_end=False)
    theta = np.random.default_rng(0).normal(scale=0.3, size=layout.n_params)

    def objective(threads):
        loss = _objective.CRFLoss(arrays, y, weights, layout, counts, n_threads=threads)
        return _objective.Objective([loss], ElasticNet(0.0, 1.0)), loss

    obj, loss = objective(1)
    n, F, nnz = Xtr.n_tokens, layout.n_features, int(Xtr.X.nnz)
    print(f"problem: {len(Xtr):,} sequences, {n:,} tokens, {F:,} features, "
          f"{nnz:,} non-zeros, {L} labels, {layout.n_params:,} parameters")

    # --- stages, one thread, whole corpus
    W, A, start, end = layout.unpack(theta)
    # the objective's kernels see features most frequent first: reorder W alike
    order = np.argsort(-np.bincount(Xtr.X.indices, minlength=F), kind="stable")
    # and pads its rows as the objective does (4k columns up to 16 labels)
    W = np.ascontiguousarray(W[order])
    Wp = np.zeros((F, row_width(L)))
    Wp[:, :L] = W
    W = Wp
    expA, es, ee, shifts = exp_transitions(A, start, end)
    ip, ix, dt, off = loss.arrays
    if loss.compact:
        # (a compact objective's kernels read record offsets, not feature
        # indices: the stages run the dense layout, on the same feature order)
        rank = np.empty(F, dtype=np.int32)
        rank[order] = np.arange(F, dtype=np.int32)
        ix = rank[arrays.indices]
        print("(the objective keeps this problem's state weights compact; the stages "
              "below run the dense layout, the whole evaluation the compact one)")
    E, U, al, be = (np.empty((n, L)) for _ in range(4))
    sc, work = np.empty(n), np.empty(L)
    gW, gA = np.zeros((F, row_width(L))), np.zeros((L, L))
    stages = [
        ("emission scores", lambda: _stage_emissions(ip, ix, dt, off, W, E)),
        ("forward-backward (with exp), no pair marginals", lambda: _stage_forward_backward(
            off, E, expA, es, ee, U, al, be, sc, work, 0.0, gA)),
        ("forward-backward with the pair marginals (what fit runs)",
         lambda: _stage_forward_backward(off, E, expA, es, ee, U, al, be, sc, work, 1.0, gA)),
        ("expected state counts", lambda: _stage_state_counts(ip, ix, dt, off, al, be,
                                                               gW, work)),
        ("emissions + forward-backward with pairs, 8 sequences side by side in SIMD "
         "lanes (what fit runs since 2026-12-02)", lambda: _stage_lanes(
             loss.order, ip, ix, dt, off, weights, W, expA, es, ee, shifts, np.zeros(
                 off.size - 1))),
    ]
    print("\n| stage (1 thread, whole corpus) | best ms | median ms |\n|---|---|---|")
    total = 0.0
    for k, (name, fn) in enumerate(stages):
        best, med = best_of(fn, 9)
        total += best if k in (0, 2, 3) else 0.0   # (stage 1 is part of stage 2)
        print(f"| {name} | {best * 1e3:.1f} | {med * 1e3:.1f} |")
    print(f"| sum of stages (emissions, forward-backward with pairs, state counts) | "
          f"{total * 1e3:.1f} | |")

    evals = {}
    for threads in (1, 2):
        o, _ = objective(threads)
        with numba_threads(threads):
            evals[threads] = best_of(lambda: o(theta), 9)
        print(f"| whole evaluation, {threads} thread{'s' * (threads > 1)} | "
              f"{evals[threads][0] * 1e3:.1f} | {evals[threads][1] * 1e3:.1f} |")

    # --- optimiser share in a real fit
    spent = {"t": 0.0, "n": 0}
    call = _objective.CRFLoss.__call__

    def timed(self, theta, *args):
        t0 = time.perf_counter()
        try:
            return call(self, theta, *args)
        finally:
            spent["t"] += time.perf_counter() - t0
            spent["n"] += 1

    _objective.CRFLoss.__call__ = timed
    try:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = LinearChainCRF(all_possible_transitions=False, start_end_transitions=False,
                               max_iter=40, n_jobs=1)
            t = time.perf_counter()
            m.fit(Xtr, [list(s) for s in trt])
            t_fit = time.perf_counter() - t
    finally:
        _objective.CRFLoss.__call__ = call
    print(f"\nfit, 40 iterations, 1 thread: {t_fit:.2f} s; {spent['n']} evaluations "
          f"({spent['n'] / m.n_iter_:.2f} per iteration) took {spent['t']:.2f} s; "
          f"outside the objective (validation, set-up, L-BFGS): "
          f"{t_fit - spent['t']:.2f} s ({(t_fit - spent['t']) / t_fit:.1%})")

    # --- lower bound
    bw1, bw2 = bandwidth_gb_s(1), bandwidth_gb_s(2)
    madd = peak_madd_per_s()
    bytes_min = nnz * (4 + 8) + (n + 1) * 8 + 2 * F * L * 8
    madds = 2 * nnz * L + 3 * n * L * L
    print(f"\nmachine: streaming read {bw1:.1f} GB/s (1 thread), {bw2:.1f} GB/s "
          f"(2 threads); dgemm {madd / 1e9:.1f} G multiply-adds/s (1 thread)")
    print(f"one evaluation must touch >= {bytes_min / 1e6:.1f} MB (CSR once, weights and "
          f"gradient once) and do {madds / 1e6:.1f} M multiply-adds (2 nnz L + 3 n L^2) "
          f"and {n * L / 1e6:.2f} M exp")
    for threads, bw in ((1, bw1), (2, bw2)):
        bound = max(bytes_min / (bw * 1e9), madds / (madd * threads))
        print(f"{threads} thread{'s' * (threads > 1)}: bound max({bytes_min / bw / 1e6:.1f} ms "
              f"memory, {madds / madd / threads * 1e3:.1f} ms arithmetic) = "
              f"{bound * 1e3:.1f} ms; measured {evals[threads][0] * 1e3:.1f} ms "
              f"= {evals[threads][0] / bound:.1f}x the bound")


if __name__ == "__main__":
    main()
