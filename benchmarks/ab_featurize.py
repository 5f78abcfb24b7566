"""Time ``SequenceFeaturizer.fit_transform`` of the SXU training text with the
default CWS features (the whole training vocabulary as the dictionary,
accessor variety jackknifed over 10 folds, character classes; ``--pmi`` adds
the PMI features) in two checkouts of skcrf, alternating, each run in a
process of its own on one thread: an A/B test of a featurisation change on a
machine whose speed drifts.

    python benchmarks/ab_featurize.py /path/to/checkout_A /path/to/checkout_B \
        --data ../shared/data/sighan2008_sxu --rounds 3
"""

import argparse
import json
import os
import subprocess
import sys
from datetime import date

HERE = os.path.dirname(os.path.abspath(__file__))

_CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
from bench_cws import read
from skcrf import SequenceFeaturizer

train, _ = read({data!r})
X = ["".join(s) for s in train]
words = sorted({{w for s in train for w in s}})


def make():
    return SequenceFeaturizer(dictionary=words, accessor_variety=5, accessor_variety_folds=10,
                              char_classes=True, adjacent_pmi={pmi})


t = time.perf_counter()
make().fit_transform(X)
first = time.perf_counter() - t
warm = []
for _ in range(3):
    t = time.perf_counter()
    make().fit_transform(X)
    warm.append(time.perf_counter() - t)
print(json.dumps({{"chars": sum(map(len, X)), "first_s": first, "warm_s": min(warm)}}))
"""


def main():
    from _common import machine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "data",
                                                   "sighan2008_sxu"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pmi", action="store_true")
    args = ap.parse_args()
    code = _CHILD.format(here=HERE, data=os.path.abspath(args.data), pmi=args.pmi)
    results = {"A": [], "B": []}
    print(f"# fit_transform of the SXU training text, default CWS features"
          f"{' + PMI' if args.pmi else ''}, 1 thread, A/B alternating — {date.today()} — "
          f"{machine()}\n# A = {args.a}\n# B = {args.b}", flush=True)
    for _ in range(args.rounds):
        for name, tree in (("A", args.a), ("B", args.b)):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), NUMBA_NUM_THREADS="1",
                       NUMBA_CACHE_DIR=os.path.join(os.path.abspath(tree), ".numba_ab_cache"))
            out = subprocess.run([sys.executable, "-c", code], env=env, cwd=HERE,
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results[name].append(r)
            print(f"{name}: first call {r['first_s']:.2f} s, warm {r['warm_s']:.2f} s "
                  f"({r['chars'] / r['warm_s'] / 1e6:.3f}M chars/s)", flush=True)
    for name in ("A", "B"):
        best = min(r["warm_s"] for r in results[name])
        first = min(r["first_s"] for r in results[name])
        n = results[name][0]["chars"]
        print(f"# {name}: best warm {best:.2f} s = {n / best / 1e6:.3f}M chars/s; "
              f"best first call (warm Numba cache) {first:.2f} s")


if __name__ == "__main__":
    main()
