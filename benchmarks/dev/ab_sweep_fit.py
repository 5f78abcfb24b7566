"""A/B of two checkouts on a corpus of the label sweep, through the public API.

One run is one fresh process importing ``skcrf`` from the checkout given:
the corpus as ``bench_label_sweep.py`` builds it (same features, c2=1,
seen transitions, no start / end weights), a 3-iteration warm-up fit
(kernels compiled or loaded), then a timed fit of ``--max-iter`` L-BFGS
iterations (a fixed count, so that both sides do the same work even when
their last bits differ) and the first predict after it. Alternate the
checkouts in a shell loop and compare pairs:

    for i in 1 2 3 4; do for c in /path/A /path/B; do
        python benchmarks/dev/ab_sweep_fit.py $c --corpus sxu --n-jobs 2; done; done
"""

import argparse
import json
import os
import sys
import warnings

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("checkout")
ap.add_argument("--corpus", default="sxu")
ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                               "shared", "data"))
ap.add_argument("--n-jobs", type=int, default=1)
ap.add_argument("--max-iter", type=int, default=100)
args = ap.parse_args()
checkout = os.path.abspath(args.checkout)
sys.path.insert(0, checkout)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, os.path.join(here, ".."))
sys.path.insert(2, os.path.join(here, "..", "claims"))
warnings.simplefilter("ignore")

from _common import first_and_best, timed_fit  # noqa: E402
from _corpora import build  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402

import skcrf  # noqa: E402
from skcrf import LinearChainCRF  # noqa: E402

assert skcrf.__file__.startswith(checkout), skcrf.__file__
Xtr, ytr, Xte, _, _ = build(args.corpus, args.data, LIMITS.get(args.corpus))
kw = dict(c2=1.0, all_possible_transitions=False, start_end_transitions=False,
          n_jobs=args.n_jobs)
LinearChainCRF(max_iter=3, **kw).fit(Xtr, ytr)
crf = LinearChainCRF(max_iter=args.max_iter, tol=0.0, **kw)
fit = timed_fit(crf, Xtr, ytr)["fit_s"]
first, _ = first_and_best(lambda: crf.predict(Xte), repeats=0)
print(json.dumps({"checkout": os.path.basename(checkout), "corpus": args.corpus,
                  "n_jobs": args.n_jobs, "fit": round(fit, 3), "n_iter": crf.n_iter_,
                  "first_predict": round(first, 4), "objective": crf.objective_}))
