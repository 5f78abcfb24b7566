"""The two sparse passes of an evaluation alone, by layout of the state weights.

For each corpus of the label sweep (built as ``bench_label_sweep.py`` builds
it: same features, the layout of a fit with seen transitions), one thread,
whole training corpus, best of 7: the emission scores and the expected state
counts with

- the dense (feature rows x labels) weights,
- compact weights: one record per feature (``skcrf._training.records``)
  with dense rows for the hot features (``skcrf._training.loss._hot_features``),
  as a compact fit runs them,
- records without any dense row.

The records' results are checked against the dense passes'. The package
picks the layout by memory (``_use_compact``); this script forces each, to
show what the choice costs in time.

    python benchmarks/dev/sparse_pass_stages.py --data ../shared/data \\
        --corpora gsd-xpos,esp-pos,synth-100
"""

import argparse
import os
import sys
import time
from datetime import datetime, timezone

import numpy as np
from numba import njit

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(1, os.path.join(here, "..", ".."))
sys.path.insert(2, os.path.join(here, "..", "claims"))

from _common import machine  # noqa: E402
from _corpora import build, training_problem  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402

from skcrf._kernels import emissions as EM  # noqa: E402
from skcrf._kernels import state_counts as SC  # noqa: E402
from skcrf._training import loss as LOSS  # noqa: E402
from skcrf._training.records import Records  # noqa: E402
from skcrf._warm_up import _forced_layout  # noqa: E402

_J = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_J)
def _emissions_dense(indptr, indices, data, offsets, W, E):
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        EM._emissions(indptr, indices, data, t0, offsets[s + 1] - t0, W, E[t0:])


@njit(**_J)
def _emissions_records(indptr, rec, data, offsets, R, E):
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        EM._emissions_records(indptr, rec, data, t0, offsets[s + 1] - t0, R, E[t0:])


@njit(**_J)
def _counts_dense(indptr, indices, data, offsets, P, gW):
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        SC._add_state_counts(indptr, indices, data, t0, offsets[s + 1] - t0, P[t0:], gW)


@njit(**_J)
def _counts_records(indptr, rec, data, offsets, P, G):
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        SC._add_state_counts_records(indptr, rec, data, t0, offsets[s + 1] - t0, P[t0:], G)


def _best(fn, *args):
    fn(*args)
    best = np.inf
    for _ in range(7):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "..", "shared", "data"))
    ap.add_argument("--corpora", default="gsd-xpos,esp-pos,synth-100")
    args = ap.parse_args()
    print(f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {machine()}")
    print("# ms per pass over the training corpus, 1 thread, best of 7")
    for name in args.corpora.split(","):
        Xtr, ytr = build(name, args.data, LIMITS.get(name))[:2]
        y, L, arrays, w, counts, layout = training_problem(Xtr, ytr)
        theta = np.random.default_rng(0).normal(scale=0.1, size=layout.n_params)
        n = int(arrays[3][-1])
        E = np.zeros((n, L))
        P = np.random.default_rng(1).random((n, L))
        old = LOSS._COMPACT_MIN_BYTES
        LOSS._COMPACT_MIN_BYTES = 2**62        # dense
        try:
            dense = LOSS.CRFLoss(arrays, y, w, layout, counts)
        finally:
            LOSS._COMPACT_MIN_BYTES = old
        W, gW = dense._buffers()
        W.reshape(-1)[dense._pos] = theta[layout.state]
        a = dense.arrays
        times = [_best(_emissions_dense, *a, W, E), _best(_counts_dense, *a, P, gW[0])]
        E_dense = E.copy()
        gW[0][...] = 0.0
        _counts_dense(*a, P, gW[0])
        g_dense = gW[0].reshape(-1)[dense._pos].copy()
        del dense, W, gW
        with _forced_layout("compact"):
            c = LOSS.CRFLoss(arrays, y, w, layout, counts)
        freq = LOSS.feature_frequencies(arrays[1], layout.n_features)
        for rec in (None, Records(layout.state_pos, L, freq, arrays[1], np.zeros(0, int),
                                  c._hot_width)):
            R, pos, a = (c._records, c._pos, c.arrays) if rec is None else \
                (rec.R, rec.positions, (arrays[0], rec.offsets, *c.arrays[2:]))
            R = R.copy()
            R[pos] = theta[layout.state]
            G = R.copy()
            G[pos] = 0.0
            times += [_best(_emissions_records, *a, R, E), _best(_counts_records, *a, P, G)]
            np.testing.assert_allclose(E, E_dense, rtol=1e-12, atol=1e-12)
            G[pos] = 0.0
            _counts_records(*a, P, G)
            np.testing.assert_allclose(G[pos], g_dense, rtol=1e-9, atol=1e-9)
        print(f"{name} ({L} labels, {c._n_hot} hot rows): emissions dense {times[0]:.1f}, "
              f"records+hot {times[2]:.1f}, records {times[4]:.1f} | state counts dense "
              f"{times[1]:.1f}, records+hot {times[3]:.1f}, records {times[5]:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
