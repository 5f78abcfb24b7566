"""A/B of two checkouts' predict speed on the corpora of the label sweep.

The first run for a corpus fits a model (c2=1, seen transitions, no start /
end weights, ``--max-iter`` iterations: near the optimum, so that the
pruned Viterbi of many labels sees realistic scores) and saves it with
joblib under ``--models``; every run then loads the saved model in a fresh
process importing ``skcrf`` from the checkout given, so both sides decode
with the same weights. Printed per corpus: tokens/s of the first predict of
the test set (a joblib-loaded model loads its kernels from the warm cache in
that call, unlike one from ``fit`` or ``load_model``) and of the best of 7
more, with 1 and 2 threads. Two-thread runs on a VM that shares its cores
vary by 2x from run to run: compare many pairs. Alternate the checkouts and compare
pairs:

    for i in 1 2 3; do for c in /path/A /path/B; do
        python benchmarks/dev/ab_predict.py $c --corpora gsd-upos,ner-bioes; done; done
"""

import argparse
import json
import os
import sys
import warnings

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("checkout")
ap.add_argument("--corpora", default="sxu,ner-bio,gsd-upos,ner-bioes,gsd-xpos,esp-pos,"
                                     "synth-100,synth-200")
ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                               "shared", "data"))
ap.add_argument("--models", default="/tmp/skcrf_ab_predict_models")
ap.add_argument("--max-iter", type=int, default=100)
args = ap.parse_args()
checkout = os.path.abspath(args.checkout)
sys.path.insert(0, checkout)
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, os.path.join(here, ".."))
sys.path.insert(2, os.path.join(here, "..", "claims"))
warnings.simplefilter("ignore")

import joblib  # noqa: E402
from _common import first_and_best  # noqa: E402
from _corpora import build  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402

import skcrf  # noqa: E402
from skcrf import LinearChainCRF  # noqa: E402

assert skcrf.__file__.startswith(checkout), skcrf.__file__
os.makedirs(args.models, exist_ok=True)
out = {"checkout": checkout}
for name in args.corpora.split(","):
    Xtr, ytr, Xte, yte, _ = build(name, args.data, LIMITS.get(name))
    path = os.path.join(args.models, f"{name}.joblib")
    if not os.path.exists(path):
        crf = LinearChainCRF(c2=1.0, all_possible_transitions=False,
                             start_end_transitions=False, max_iter=args.max_iter)
        joblib.dump(crf.fit(Xtr, ytr), path)
    n_tok = sum(len(s) for s in yte)
    row = {}
    for n_jobs in (1, 2):
        crf = joblib.load(path)
        crf.set_params(n_jobs=n_jobs)
        first, best = first_and_best(lambda: crf.predict(Xte), repeats=7)
        row[n_jobs] = (round(n_tok / first), round(n_tok / best))
    out[name] = row
    print(f"{name:10s} first/best tok/s 1 thread {row[1][0]:>11,} {row[1][1]:>11,}"
          f" | 2 threads {row[2][0]:>11,} {row[2][1]:>11,}", flush=True)
print(json.dumps(out))
