"""Time ``SequenceFeaturizer.fit_transform`` of the SXU training text with the
default CWS features (the whole training vocabulary as the dictionary,
accessor variety jackknifed over 10 folds, character classes; ``--pmi`` adds
the PMI features), and ``transform`` of the test text after ``fit``, in two
checkouts of skcrf, alternating, each run in a
process of its own on one thread: an A/B test of a featurisation change on a
machine whose speed drifts. Besides wall time it reports the user CPU time:
on this VM the system time of first touching fresh memory varies from 0.2
to 1 s per call (page faults served by the host), the user time by ~5 %.

    python benchmarks/dev/ab_featurize.py /path/to/checkout_A /path/to/checkout_B \
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
import json, resource, sys, time
sys.path.insert(0, {here!r})
from bench_cws import read
from skcrf import SequenceFeaturizer

train, test = read({data!r})
X = ["".join(s) for s in train]
Xt = ["".join(s) for s in test]
words = sorted({{w for s in train for w in s}})


def make():
    return SequenceFeaturizer(dictionary=words, accessor_variety=5, accessor_variety_folds=10,
                              char_classes=True, adjacent_pmi={pmi})


rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
make().fit_transform(X)
first = time.perf_counter() - t
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
warm, user, sys_ = [], [], []
for _ in range(3):
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    make().fit_transform(X)
    warm.append(time.perf_counter() - t)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    user.append(r1.ru_utime - r0.ru_utime)
    sys_.append(r1.ru_stime - r0.ru_stime)
f = make().fit(X)
f.transform(Xt[:10])
tr = []
for _ in range(3):
    t = time.perf_counter()
    f.transform(Xt)
    tr.append(time.perf_counter() - t)
print(json.dumps({{"chars": sum(map(len, X)), "first_s": first, "warm_s": min(warm),
                  "user_s": min(user), "sys_s": min(sys_),
                  "test_chars": sum(map(len, Xt)), "transform_s": min(tr),
                  "peak_added_mb": (rss1 - rss0) / 1024}}))
"""


def main():
    sys.path.insert(0, os.path.join(HERE, ".."))
    from _common import machine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "..", "shared", "data",
                                                   "sighan2008_sxu"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pmi", action="store_true")
    args = ap.parse_args()
    code = _CHILD.format(here=os.path.join(HERE, "..", "claims"),
                         data=os.path.abspath(args.data), pmi=args.pmi)
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
                  f"({r['chars'] / r['warm_s'] / 1e6:.3f}M chars/s; CPU: user "
                  f"{r['user_s']:.2f} s = {r['chars'] / r['user_s'] / 1e6:.3f}M chars/s, "
                  f"system {r['sys_s']:.2f} s); transform of the test "
                  f"text {r['transform_s']:.3f} s "
                  f"({r['test_chars'] / r['transform_s'] / 1e6:.3f}M chars/s); the first "
                  f"fit_transform raised the peak RSS by {r['peak_added_mb']:.0f} MB", flush=True)
    for name in ("A", "B"):
        best = min(r["warm_s"] for r in results[name])
        first = min(r["first_s"] for r in results[name])
        n = results[name][0]["chars"]
        tr = min(r["transform_s"] for r in results[name])
        user = min(r["user_s"] for r in results[name])
        print(f"# {name}: best warm {best:.2f} s = {n / best / 1e6:.3f}M chars/s "
              f"(best user CPU {user:.2f} s = {n / user / 1e6:.3f}M chars/s); "
              f"best first call (warm Numba cache) {first:.2f} s; transform of the test "
              f"text {results[name][0]['test_chars'] / tr / 1e6:.3f}M chars/s")


if __name__ == "__main__":
    main()
