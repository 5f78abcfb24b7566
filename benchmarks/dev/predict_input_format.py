"""Predict speed by input format: the same features as a scipy CSR matrix
(what scikit-learn's ``DictVectorizer`` gives, as ``bench_label_sweep.py``
builds its corpora) and as a binary ``Sequences`` (column indices only, what
skcrf's own vectorizers return). For each form, three fits of 30 iterations,
each followed by the first predict of the test set and the best of 5 more.

    python benchmarks/dev/predict_input_format.py --corpus ner-bio
"""

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
warnings.simplefilter("ignore")

from _common import DEFAULT_DATA, first_and_best  # noqa: E402
from _corpora import build  # noqa: E402

from skcrf import LinearChainCRF, Sequences  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--corpus", default="ner-bio")
ap.add_argument("--data", default=DEFAULT_DATA)
args = ap.parse_args()
Xtr, ytr, Xte, _, _ = build(args.corpus, args.data, None)
Xb = Sequences._from_binary_csr(Xte.X.indptr.astype(np.int64),
                                Xte.X.indices.astype(np.int32), Xte.n_features, Xte.lengths)
n = Xte.n_tokens
kinds = (f"scipy CSR ({Xte.X.indices.dtype} indices, {Xte.X.data.dtype} values)", Xte), \
    ("binary Sequences (int32 indices)", Xb)
for form, X in kinds:
    for _ in range(3):
        crf = LinearChainCRF(max_iter=30, all_possible_transitions=False,
                             start_end_transitions=False).fit(Xtr, ytr)
        first, best = first_and_best(lambda: crf.predict(X))
        print(f"{form}: first {n / first:,.0f} tok/s, best {n / best:,.0f} tok/s")
