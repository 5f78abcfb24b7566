"""A/B of two checkouts through the public API only, for changes that move
internal modules (the A/B tools that reach into the kernels need both
checkouts to share a layout).

Each run is a fresh process importing ``skcrf`` from the checkout given:
CoNLL-2002's tutorial features, a warm-up fit (kernels compiled or loaded),
then a timed fit of 40 L-BFGS iterations, the first predict of esp.testb
after it (weights and test arrays not yet in the CPU's caches) and the best
of 5 more. Alternate the checkouts in a shell loop and compare pairs:

    for i in 1 2 3 4 5 6; do for c in A B; do
        echo -n "$c "; python benchmarks/dev/ab_public_api.py $c; done; done
"""

import json
import os
import sys
import warnings

checkout = os.path.abspath(sys.argv[1])
data = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "data", "conll2002")
sys.path.insert(0, checkout)
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
warnings.simplefilter("ignore")

from _common import first_and_best, load_conll2002, timed_fit, vectorise  # noqa: E402

import skcrf  # noqa: E402
from skcrf import LinearChainCRF  # noqa: E402

assert skcrf.__file__.startswith(checkout), skcrf.__file__
Xtr, ytr, Xte, _ = load_conll2002(data)
S, T = vectorise(Xtr, Xte)
crf = LinearChainCRF(max_iter=40, all_possible_transitions=False, start_end_transitions=False)
crf.fit(S, ytr)
fit = timed_fit(crf, S, ytr)["fit_s"]
first, best = first_and_best(lambda: crf.predict(T))
print(json.dumps({"fit": fit, "predict": best, "first_predict": first,
                  "objective": crf.objective_}))
