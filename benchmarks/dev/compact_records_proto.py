"""Prototype, not used by the package: compact state weights as one record per
feature, against the dense rows and the package's compact layout.

The package's compact layout (``CRFLoss._compact_layout``) reads a rare
feature's parameters through three arrays (``hot[f]``, then ``rp[f]`` and
``rp[f + 1]``, then ``lab`` and ``theta``): three cache misses per non-zero
where the dense layout has one row. Here each feature has a record in one
float64 array ``R``, most frequent feature first::

    [n, label_0, weight_0, label_1, weight_1, ...]   (n parameters)
    [-(1 + r)]                                       (a hot feature: dense row r of Wh)

and the kernels read a copy of the column indices renumbered to record
offsets (4 bytes per non-zero, as the dense layout's renumbered copy): one
record, mostly one cache line, per non-zero. The gradient has records of
the same layout (``G``: labels copied, the value slots accumulated). Timed:
the two sparse passes alone (emission scores, expected state counts; one
thread, whole training corpus, best of 7), binary features only, as
``sparse_pass_stages.py`` times the package's; the records' results are
checked against the dense pass's. Not timed: writing the weights into the
records and gathering the gradient from them once per evaluation (as the
dense layout scatters and gathers).

    python benchmarks/dev/compact_records_proto.py --corpora gsd-upos,gsd-xpos
"""

import argparse
import os
import sys
from datetime import datetime, timezone

import numpy as np
from numba import njit

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(1, os.path.join(here, ".."))
sys.path.insert(2, os.path.join(here, "..", "claims"))

from _common import DEFAULT_DATA, machine  # noqa: E402
from _corpora import build, training_problem  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402
from sparse_pass_stages import (  # noqa: E402
    _best,
    _counts_compact,
    _counts_dense,
    _emissions_compact,
    _emissions_dense,
)

from skcrf._kernels.intrinsics import prefetch_row  # noqa: E402
from skcrf._training import loss as LOSS  # noqa: E402
from skcrf._warm_up import _forced_layout  # noqa: E402

_J = dict(cache=False, nogil=True, error_model="numpy")
_PD = 32


@njit(**_J)
def _emissions_records(indptr, rec, R, Wh, L, E):
    R2 = R.reshape((-1, 1))
    nnz = rec.size
    for t in range(indptr.size - 1):
        for j in range(L):
            E[t, j] = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            if p + _PD < nnz:
                prefetch_row(R2, rec[p + _PD])
            o = rec[p]
            h = R[o]
            if h < 0.0:
                r = int(-h) - 1
                for j in range(L):
                    E[t, j] += Wh[r, j]
            else:
                for i in range(int(h)):
                    E[t, int(R[o + 1 + 2 * i])] += R[o + 2 + 2 * i]


@njit(**_J)
def _counts_records(indptr, rec, G, gWh, L, P):
    G2 = G.reshape((-1, 1))
    nnz = rec.size
    for t in range(indptr.size - 1):
        for p in range(indptr[t], indptr[t + 1]):
            if p + _PD < nnz:
                prefetch_row(G2, rec[p + _PD])
            o = rec[p]
            h = G[o]
            if h < 0.0:
                r = int(-h) - 1
                for j in range(L):
                    gWh[r, j] += P[t, j]
            else:
                for i in range(int(h)):
                    G[o + 2 + 2 * i] += P[t, int(G[o + 1 + 2 * i])]


def records(rp, lab, th, hot, freq):
    """R (weights' records), G (the gradient's, value slots 0), the record
    offset of each feature, and the R position of each parameter's value."""
    F = rp.size - 1
    n = np.diff(rp).astype(np.int64)
    size = np.where(hot >= 0, 1, 1 + 2 * n)
    rank = np.argsort(-freq, kind="stable")
    off = np.empty(F, np.int64)
    off[rank] = np.concatenate([[0], np.cumsum(size[rank])[:-1]])
    R = np.zeros(int(size.sum()))
    R[off] = np.where(hot >= 0, -(1.0 + hot), n)
    f_of = np.repeat(np.arange(F), n)
    k_in = np.arange(rp[-1]) - rp[f_of]
    cold = hot[f_of] < 0
    slot = off[f_of] + 2 + 2 * k_in
    R[slot[cold] - 1] = lab[cold]
    R[slot[cold]] = th[cold]
    G = R.copy()
    G[slot[cold]] = 0.0
    return R, G, off, slot, cold


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--corpora", default="gsd-upos,ner-bioes,gsd-xpos,esp-pos")
    args = ap.parse_args()
    print(f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {machine()}")
    print("# ms per pass over the training corpus, 1 thread, best of 7; binary features")
    for name in args.corpora.split(","):
        Xtr, ytr = build(name, args.data, LIMITS.get(name))[:2]
        y, L, arrays, w, counts, layout = training_problem(Xtr, ytr)
        theta = np.random.default_rng(0).normal(scale=0.1, size=layout.n_params)
        n = int(arrays[3][-1])
        P = np.random.default_rng(1).random((n, L))
        E = np.zeros((n, L))
        old = LOSS._COMPACT_MIN_BYTES
        LOSS._COMPACT_MIN_BYTES = 2**62        # dense
        try:
            dense = LOSS.CRFLoss(arrays, y, w, layout, counts)
        finally:
            LOSS._COMPACT_MIN_BYTES = old
        W, gW = dense._buffers()
        W.reshape(-1)[dense._pos] = theta[layout.state]
        a = dense.arrays
        t = {"dense": (_best(_emissions_dense, *a, W, E), _best(_counts_dense, *a, P, gW[0]))}
        E_dense = E.copy()
        gW[0][...] = 0.0
        _counts_dense(*a, P, gW[0])
        g_dense = gW[0].reshape(-1)[dense._pos].copy()
        del dense, W, gW
        with _forced_layout("compact"):
            c = LOSS.CRFLoss(arrays, y, w, layout, counts)
        th = theta[layout.state].copy()
        g = np.zeros_like(th)
        Wh, _ = c._buffers()
        Wh.reshape(-1)[c._hot_pos] = th[c._hot_params]
        gWh = c._gWh[0]
        a, rp, lab = c.arrays, c._rp, c._lab
        t["compact+hot"] = (_best(_emissions_compact, *a, rp, lab, th, c._hot, Wh, E),
                            _best(_counts_compact, *a, P, rp, lab, g, c._hot, gWh))
        freq = LOSS.feature_frequencies(a[1], rp.size - 1)
        indptr, indices = a[0], a[1]
        for label, hot in (("records+hot", c._hot), ("records", np.full_like(c._hot, -1))):
            R, G, off, slot, cold = records(rp, lab, th, hot, freq)
            rec = off.astype(np.int32)[indices]
            t[label] = (_best(_emissions_records, indptr, rec, R, Wh, L, E),
                        _best(_counts_records, indptr, rec, G, gWh, L, P))
            np.testing.assert_allclose(E, E_dense, rtol=1e-12, atol=1e-12)
            G[slot[cold]] = 0.0
            gWh[...] = 0.0
            _counts_records(indptr, rec, G, gWh, L, P)
            got = np.empty_like(th)
            got[cold] = G[slot[cold]]
            if label == "records+hot":
                got[c._hot_params] = gWh.reshape(-1)[c._hot_pos]
            np.testing.assert_allclose(got, g_dense, rtol=1e-9, atol=1e-9)
            mb = (R.nbytes + rec.nbytes) / 1e6
        print(f"{name} ({L} labels, {c._n_hot} hot rows; records {mb:.1f} MB with the index "
              "copy): " + "; ".join(f"{k} {e:.1f} + {s:.1f} ms" for k, (e, s) in t.items()),
              flush=True)


if __name__ == "__main__":
    main()
