"""A fit of a sweep corpus with the layout the package picks (``default``)
against the same fit forced to compact state weights (records), alternated in
one process: what the compact layout would cost where the dense one is
chosen (or the reverse).

    python benchmarks/dev/forced_layout_fit.py --corpus ner-bioes --n-jobs 1

60 L-BFGS iterations per fit (after a 3-iteration warm-up fit of each
layout), three rounds; prints the times and the ratio of the best ones.
"""

import argparse
import contextlib
import os
import sys
import time
import warnings

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(1, os.path.join(here, "..", "claims"))
warnings.simplefilter("ignore")

from _common import DEFAULT_DATA  # noqa: E402
from _corpora import build  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402

from skcrf import LinearChainCRF  # noqa: E402
from skcrf._warm_up import _forced_layout  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--corpus", default="ner-bioes")
ap.add_argument("--data", default=DEFAULT_DATA)
ap.add_argument("--n-jobs", type=int, default=1)
args = ap.parse_args()
corpus, nj = args.corpus, args.n_jobs
Xtr, ytr, *_ = build(corpus, args.data, LIMITS.get(corpus))
kw = dict(c2=1.0, all_possible_transitions=False, start_end_transitions=False, n_jobs=nj)
for ctx in (contextlib.nullcontext, lambda: _forced_layout("compact")):
    with ctx():
        LinearChainCRF(max_iter=3, **kw).fit(Xtr, ytr)
res = {"default": [], "records": []}
for _ in range(3):
    for name, ctx in (("default", contextlib.nullcontext),
                      ("records", lambda: _forced_layout("compact"))):
        with ctx():
            t = time.perf_counter()
            LinearChainCRF(max_iter=60, tol=0.0, **kw).fit(Xtr, ytr)
            res[name].append(time.perf_counter() - t)
print(f"{corpus}, n_jobs={nj}: fit s {({k: [round(x, 2) for x in v] for k, v in res.items()})}; "
      f"records / default, best: {min(res['records']) / min(res['default']):.3f}")
