"""What clearing the dense state-gradient buffers before each evaluation
costs: one objective evaluation (random weights, c2=1) of a corpus of the
label sweep as the objective runs it (the buffers cleared by the gather that
reads them), and with the whole buffers cleared before it (what every
evaluation did before 2026-12-07), alternated in one process, best of 15.

    python benchmarks/dev/clearing_cost.py --corpus sxu --n-jobs 1
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(1, os.path.join(here, "..", "claims"))
warnings.simplefilter("ignore")

from _common import DEFAULT_DATA  # noqa: E402
from _corpora import build, training_problem  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402

from skcrf._kernels.parallel import numba_threads  # noqa: E402
from skcrf._training.loss import CRFLoss  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--corpus", default="sxu")
ap.add_argument("--data", default=DEFAULT_DATA)
ap.add_argument("--n-jobs", type=int, default=1)
args = ap.parse_args()
nt = args.n_jobs

Xtr, ytr, _, _, _ = build(args.corpus, args.data, LIMITS.get(args.corpus))
y, _, arrays, w, counts, layout = training_problem(Xtr, ytr)
loss = CRFLoss(arrays, y, w, layout, counts, n_threads=nt)
if loss.compact:
    sys.exit(f"{args.corpus}: compact state weights (records), whose gradient buffers hold "
             "headers and labels that a whole-buffer clear would erase")
theta = np.random.default_rng(0).normal(scale=0.3, size=layout.n_params)


def evaluation(clear):
    t = time.perf_counter()
    if clear:
        loss._gW[...] = 0.0
    with numba_threads(nt):
        loss(theta, 1.0)
    return time.perf_counter() - t


best = {False: evaluation(False), True: evaluation(True)}
for _ in range(15):
    for clear in (False, True):
        best[clear] = min(best[clear], evaluation(clear))
print(f"{args.corpus}, {nt} thread(s): gradient buffers {loss._gW.nbytes / 1e6:.1f} MB; "
      f"evaluation {best[False] * 1e3:.1f} ms, with the whole buffers cleared first "
      f"{best[True] * 1e3:.1f} ms (+{(best[True] - best[False]) * 1e3:.1f} ms)")
