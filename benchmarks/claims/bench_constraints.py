"""BIO constraints on CoNLL-2002 Spanish NER: invalid transitions, F1, fit time.

Same features as bench_conll2002.py (the sklearn-crfsuite tutorial set), c2=1,
all transitions and start/end weights; trains skcrf without and with
``constraints="BIO"`` and counts, in the esp.testb predictions, transitions
the BIO scheme forbids (``O -> I-X``, ``B-X -> I-Y``, a sequence starting
with ``I-X``).

    python benchmarks/claims/bench_constraints.py --data ../shared/data/conll2002
"""

import argparse
import os
import sys
import time
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, load_conll2002, machine, vectorise

from skcrf import LinearChainCRF, allowed_transitions, repair_tags
from skcrf.metrics import span_f1_score


def count_invalid(pred, labels):
    pairs = set(allowed_transitions("BIO", labels))
    bad = 0
    for p in pred:
        seq = ["<start>"] + list(p) + ["<end>"]
        bad += sum((a, b) not in pairs for a, b in zip(seq, seq[1:]))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    Xtr, ytr, Xte, yte = load_conll2002(args.data, args.limit)
    Str, Ste = vectorise(Xtr, Xte)
    repaired = [repair_tags(t) for t in ytr]
    n_fixed = sum(a != b for s, r in zip(ytr, repaired) for a, b in zip(s, r))
    print(f"(esp.train has {n_fixed} I- tags that cannot continue an entity; "
          "constraints='BIO' refuses them, so both runs train on the conlleval "
          "reading, with those tags as B-)")
    ytr = repaired
    print(f"# CoNLL-2002 Spanish, BIO constraints — {date.today()} — {machine()}")
    print("| constraints | fit s | iters | objective | invalid transitions (testb) | entity F1 |")
    print("|---|---|---|---|---|---|")
    LinearChainCRF(constraints="BIO").fit(Str[:5], ytr[:5])  # compile / load kernels
    for constraints in (None, "BIO"):
        crf = LinearChainCRF(c2=1.0, n_jobs=args.n_jobs, constraints=constraints)
        t = time.perf_counter()
        crf.fit(Str, ytr)
        fit_s = time.perf_counter() - t
        pred = crf.predict(Ste)
        print(f"| {constraints} | {fit_s:.1f} | {crf.n_iter_} | {crf.objective_:.2f} | "
              f"{count_invalid(pred, crf.classes_.tolist())} | "
              f"{span_f1_score(yte, pred, 'BIO'):.4f} |")


if __name__ == "__main__":
    main()
