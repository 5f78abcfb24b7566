"""CRFsuite model files with skcrf: load time, tagging speed through
``skcrf.compat.pycrfsuite.Tagger``, against python-crfsuite in the same run.

* load: a synthetic CRFsuite model of about 50 MB (``--attributes``
  attributes, ``--labels`` labels, ``--per-attribute`` state features each),
  written by skcrf and checked to open in python-crfsuite; time of
  ``skcrf.load_model`` (parse, check, build the weights) and of
  python-crfsuite's ``Tagger.open``, best of 3 each;
* round trip on CoNLL-2002 (``--data``): a model trained by python-crfsuite
  on esp.train (the sklearn-crfsuite tutorial's features) loaded by
  ``skcrf.load_model`` tags esp.testb: identical labels, largest marginal
  difference; and a model trained by skcrf, written with
  ``save_model(..., format="crfsuite")``, tagged by python-crfsuite;
* tag: usaddress's shipped model (``usaddr.crfsuite``; the package is in
  the [test] extra) on synthetic addresses, one ``Tagger.tag`` call per
  sequence as usaddress makes them, microseconds per sequence, best of 5
  rounds; and whether every label agrees.

    python benchmarks/claims/bench_crfsuite_files.py --data ../shared/data

Results: ``benchmarks/results/crfsuite_files.txt``.
"""

import argparse
import os
import sys
import tempfile
import time
from datetime import date

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "..")]

from _common import DEFAULT_DATA, load_conll2002, machine  # noqa: E402


def best_of(n, fn):
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench_load(args):
    import pycrfsuite

    import skcrf
    from skcrf.compat._crfsuite_model import CRFsuiteModel

    rng = np.random.default_rng(0)
    B, L, k = args.attributes, args.labels, args.per_attribute
    attrs = [f"w[{i % 7 - 3}]={i:x}|shape={i % 97}" for i in range(B)]
    W = np.zeros((B, L))
    rows = np.repeat(np.arange(B), k)
    cols = (rows * 7 + np.tile(np.arange(k), B)) % L
    W[rows, cols] = rng.normal(size=rows.size)
    model = CRFsuiteModel([f"L{j}" for j in range(L)], attrs, W, rng.normal(size=(L, L)))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.crfsuite")
        t = time.perf_counter()
        with open(path, "wb") as fh:
            fh.write(model.to_bytes())
        write_s = time.perf_counter() - t
        size = os.path.getsize(path) / 2**20
        ours = best_of(3, lambda: skcrf.load_model(path).classes_)
        theirs = best_of(3, lambda: pycrfsuite.Tagger().open(path))
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        assert tagger.labels() == model.labels
    print(f"## load: a {size:.1f} MB CRFsuite model ({B:,} attributes, {L} labels, "
          f"{B * k:,} state features), written by skcrf in {write_s:.1f} s")
    print(f"skcrf.load_model {ours:.3f} s; python-crfsuite Tagger.open {theirs:.3f} s "
          "(best of 3; CRFsuite maps the file and reads it lazily)")


def bench_round_trip(args):
    import pycrfsuite

    import skcrf
    from skcrf.compat import CRF

    path = os.path.join(args.data, "conll2002")
    if not os.path.isdir(path):
        print(f"## round trip: skipped, no CoNLL-2002 under {args.data}")
        return
    Xtr, ytr, Xte, _ = load_conll2002(path, args.limit)
    n_tok = sum(map(len, Xte))
    with tempfile.TemporaryDirectory() as tmp:
        theirs_path = os.path.join(tmp, "crfsuite.model")
        trainer = pycrfsuite.Trainer(verbose=False)
        for x, y in zip(Xtr, ytr):
            trainer.append(x, y)
        trainer.set_params({"c1": 0.1, "c2": 0.1, "max_iterations": 100})
        trainer.train(theirs_path)
        ref = pycrfsuite.Tagger()
        ref.open(theirs_path)
        model = skcrf.load_model(theirs_path)
        ours = model.predict(Xte)
        marg = model.predict_marginals(Xte)
        same = diff = 0
        for x, labels, m in zip(Xte, ours, marg):
            ref.set(x)
            same += sum(a == b for a, b in zip(labels, ref.tag()))
            for t, row in enumerate(m):
                diff = max(diff, max(abs(p - ref.marginal(lab, t)) for lab, p in row.items()))
        print(f"## round trip on CoNLL-2002 ({len(Xtr):,} training sentences, esp.testb "
              f"{n_tok:,} tokens)")
        print(f"python-crfsuite's model read by skcrf: {same:,} of {n_tok:,} labels identical, "
              f"largest marginal difference {diff:.1e}")
        crf = CRF(c1=0.1, c2=0.1, max_iterations=100).fit(Xtr, ytr)
        ours_path = os.path.join(tmp, "skcrf.crfsuite")
        skcrf.save_model(crf, ours_path, format="crfsuite")
        tagger = pycrfsuite.Tagger()
        tagger.open(ours_path)
        pred = crf.predict(Xte)
        same = sum(a == b for x, p in zip(Xte, pred) for a, b in zip(p, tagger.tag(x)))
        print(f"skcrf's model written as a CRFsuite file, tagged by python-crfsuite: "
              f"{same:,} of {n_tok:,} labels identical")


def bench_tag(args):
    import pycrfsuite
    import usaddress

    import skcrf.compat.pycrfsuite as ours
    from tests.compat.test_published_package import _addresses

    addrs = [a for a in _addresses(args.sequences, seed=1) if a]
    seqs = [usaddress.tokens2features(usaddress.tokenize(a)) for a in addrs]
    n_tok = sum(map(len, seqs))
    res, labels = {}, {}
    for name, mod in (("python-crfsuite", pycrfsuite), ("skcrf", ours)):
        tagger = mod.Tagger()
        tagger.open(usaddress.MODEL_PATH)
        labels[name] = [tagger.tag(s) for s in seqs]      # (warms the kernel)
        res[name] = best_of(5, lambda t=tagger: [t.tag(s) for s in seqs]) / len(seqs)
    same = sum(a == b for a, b in zip(labels["skcrf"], labels["python-crfsuite"]))
    print(f"## tag: usaddress's model (usaddr.crfsuite), {len(seqs):,} addresses, "
          f"{n_tok / len(seqs):.1f} tokens each, one Tagger.tag call per address")
    for name, s in res.items():
        print(f"{name:16s} {s * 1e6:7.1f} us / sequence  "
              f"({s / res['python-crfsuite']:.2f}x python-crfsuite's time)")
    print(f"identical labels: {same:,} of {len(seqs):,} sequences")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attributes", type=int, default=300_000)
    ap.add_argument("--labels", type=int, default=20)
    ap.add_argument("--per-attribute", type=int, default=5)
    ap.add_argument("--sequences", type=int, default=3000)
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=3000,
                    help="training sentences of the CoNLL-2002 round trip")
    args = ap.parse_args()
    print(f"# CRFsuite model files — {date.today()} — {machine()}")
    bench_load(args)
    bench_round_trip(args)
    bench_tag(args)


if __name__ == "__main__":
    main()
