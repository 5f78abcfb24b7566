"""Fit and predict against CRFsuite across label counts: 4 to 200 labels.

For each corpus of ``benchmarks/_corpora.py`` (real ones cut from ``--data``,
synthetic ones of 100 and 200 labels), both engines get the same binary
features and the same objective (c1=0, c2=1, transitions for the label
pairs seen in training, no start / end weights, stopping rules at their
defaults): CRFsuite through sklearn-crfsuite's ``fit`` (as its users call
it) and skcrf's ``LinearChainCRF`` on 1 and 2 threads, each in its own
process with a warm Numba cache. Printed per corpus:

* fit seconds and ratios to CRFsuite's fit; iterations; seconds per
  iteration and their ratio to CRFsuite's own training loop (the sum of
  its logged iteration times: the engines alone, no data hand-over);
  objective (relative difference); fit-added memory (peak RSS during fit
  minus the RSS before it, the input already in memory) and its ratio;
* predict tokens/s on the test split, of the first call after fit (skcrf:
  its kernels are loaded from the cache then) and the best of 5 (CRFsuite:
  python-crfsuite's Tagger on attribute lists, best of 3), and ratios;
  token accuracy of both engines;
* skcrf's compile / cache-load cost of a first fit of this shape: the first
  of two identical 3-iteration fits minus the second (same process);
* one objective evaluation (mean of the fit's evaluations, 1 thread) against
  a lower bound: the bytes it must stream (the CSR once, each state
  parameter and its gradient once) over the measured bandwidth, or its
  multiply-adds (each non-zero times its feature's parameters, twice;
  3 n L^2 for forward-backward with pair marginals) over the measured dgemm
  rate, whichever is larger.

    python benchmarks/claims/bench_label_sweep.py --data ../shared/data
    python benchmarks/claims/bench_label_sweep.py --corpora ner-bio,gsd-xpos --rounds 2

Results: ``benchmarks/results/label_sweep.txt``.
"""

import argparse
import json
import os
import sys
import time
import warnings
from datetime import date

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import (
    DEFAULT_DATA,
    first_and_best,
    machine,
    reset_peak_rss,
    run_json_child,
    vm_hwm_mb,
    vm_rss_mb,
)
from _corpora import LABELS, build

#: training sentences per corpus (None: all), so that CRFsuite's fit takes
#: minutes, not hours, at 100+ labels
LIMITS = {"sxu": 4000, "ner-bio": None, "gsd-upos": None, "ner-bioes": None,
          "gsd-xpos": None, "esp-pos": None, "synth-100": 3000, "synth-200": 1500}


def _accuracy(y_true, y_pred):
    a = np.concatenate([np.asarray(s, dtype=object) for s in y_true])
    b = np.concatenate([np.asarray(s, dtype=object) for s in y_pred])
    return float(np.mean(a == b))


def _attribute_lists(seqs, names):
    X, off = seqs.X, seqs.offsets
    rows = [names[X.indices[X.indptr[t]:X.indptr[t + 1]]].tolist() for t in range(X.shape[0])]
    return [rows[off[s]:off[s + 1]] for s in range(len(seqs))]


def child_crfsuite(args):
    """CRFsuite as its users call it: sklearn-crfsuite's ``fit`` (it hands the
    sequences to CRFsuite and trains; timed and measured as a whole, as the
    earlier benchmarks and the issues did), then python-crfsuite's Tagger
    directly on attribute lists (its fastest input) for prediction."""
    import sklearn_crfsuite

    Xtr, ytr, Xte, yte, names = build(args.corpus, args.data, args.limit)
    train = _attribute_lists(Xtr, names)
    test = _attribute_lists(Xte, names)
    del Xtr, Xte
    model = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=args.c2,
                                 max_iterations=args.max_iter,
                                 all_possible_transitions=False)
    import gc

    gc.collect()
    reset_peak_rss()
    before = vm_rss_mb()
    t = time.perf_counter()
    model.fit(train, ytr)
    fit_s = time.perf_counter() - t
    peak = vm_hwm_mb()
    log = model.training_log_
    tagger = model.tagger_
    best = first_s = float("inf")
    for k in range(3):
        t = time.perf_counter()
        pred = [tagger.tag(x) for x in test]
        best = min(best, time.perf_counter() - t)
        first_s = best if k == 0 else first_s
    n_test = sum(len(s) for s in yte)
    return {"fit_s": fit_s, "n_iter": len(log.iterations),
            "loop_s": sum(it["time"] for it in log.iterations),
            "objective": log.last_iteration["loss"], "fit_added_mb": peak - before,
            "predict_tps": n_test / best, "first_predict_tps": n_test / first_s,
            "accuracy": _accuracy(yte, pred),
            "n_params": log.last_iteration["active_features"]}


def child_skcrf(args):
    from sklearn.exceptions import ConvergenceWarning

    from skcrf import LinearChainCRF
    from skcrf._training import loss as _loss

    Xtr, ytr, Xte, yte, _ = build(args.corpus, args.data, args.limit)
    kw = dict(c2=args.c2, all_possible_transitions=False, start_end_transitions=False,
              n_jobs=args.n_jobs)
    # the compile / cache-load cost of a first fit of this shape (warm cache)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        times = []
        for _ in range(2):
            t = time.perf_counter()
            LinearChainCRF(max_iter=3, **kw).fit(Xtr, ytr)
            times.append(time.perf_counter() - t)
    seen = {"t": 0.0, "n": 0, "loss": None}
    call, init = _loss.CRFLoss.__call__, _loss.CRFLoss.__init__

    def timed(self, theta, *args):
        t0 = time.perf_counter()
        try:
            return call(self, theta, *args)
        finally:
            seen["t"] += time.perf_counter() - t0
            seen["n"] += 1

    def remember(self, *a, **k):
        init(self, *a, **k)
        seen["loss"] = self

    _loss.CRFLoss.__call__, _loss.CRFLoss.__init__ = timed, remember
    import gc

    gc.collect()
    reset_peak_rss()
    before = vm_rss_mb()
    t = time.perf_counter()
    model = LinearChainCRF(max_iter=args.max_iter, **kw).fit(Xtr, ytr)
    fit_s = time.perf_counter() - t
    peak = vm_hwm_mb()
    _loss.CRFLoss.__call__, _loss.CRFLoss.__init__ = call, init
    first_s, best = first_and_best(lambda: model.predict(Xte))
    pred = model.predict(Xte)
    n_test = sum(len(s) for s in yte)
    out = {"fit_s": fit_s, "n_iter": model.n_iter_, "objective": model.objective_,
           "fit_added_mb": peak - before, "predict_tps": n_test / best,
           "first_predict_tps": n_test / first_s,
           "accuracy": _accuracy(yte, pred), "n_params": int(model.n_params_),
           "first_fit_extra_s": times[0] - times[1], "eval_s": seen["t"] / max(seen["n"], 1),
           "evals": seen["n"], "compact": bool(seen["loss"].compact)}
    # what one evaluation must do: stream the CSR, each state parameter and its
    # gradient once; per non-zero, its feature's parameters (seen labels)
    L = model.classes_.size
    X = Xtr.X
    per_feature = np.count_nonzero(model.coef_, axis=0)      # coef_: (labels, features)
    n_state = int(per_feature.sum())
    n = X.shape[0]
    out["lb_bytes"] = X.nnz * 12 + (n + 1) * 8 + 2 * n_state * 8
    out["lb_madds"] = 2 * float(per_feature[X.indices].sum()) + 3.0 * n * L * L
    out.update(n_tokens=int(n), nnz=int(X.nnz), n_labels=int(L))
    return out


def child_machine():
    x = np.ones(2**27)     # 1 GiB, far beyond any cache
    x.sum()
    t = min(_timed(x.sum) for _ in range(3))
    a = np.random.default_rng(0).random((1500, 1500))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        tm = min(_timed(lambda: a @ a) for _ in range(3))
    return {"bw": x.nbytes / t, "madd": 1500.0**3 / tm}


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def spawn(args, engine, corpus=None, n_jobs=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, "--data", args.data,
           "--c2", str(args.c2), "--max-iter", str(args.max_iter), "--tmp", args.tmp]
    if corpus:
        cmd += ["--corpus", corpus]
        limit = LIMITS[corpus] if args.limit is None else args.limit
        if limit:
            cmd += ["--limit", str(limit)]
    if n_jobs:
        cmd += ["--n-jobs", str(n_jobs)]
    return run_json_child(cmd)


def report(corpus, rows, mach):
    ref = rows["CRFsuite"]
    s1 = rows["skcrf 1 thread"]
    L = s1["n_labels"]
    lb = max(s1["lb_bytes"] / mach["bw"], s1["lb_madds"] / mach["madd"])
    print(f"\n## {corpus}: {L} labels, {s1['n_tokens']:,} tokens, {s1['nnz']:,} non-zeros, "
          f"{s1['n_params']:,} parameters ({'compact' if s1['compact'] else 'dense'} state "
          f"weights)")
    print("| engine | fit s | x CRFsuite | iters | s/iter | x CRFsuite loop | objective | "
          "rel. diff | fit-added MB | x CRFsuite | predict tok/s | x | first predict tok/s | "
          "x | accuracy |")
    print("|---" * 15 + "|")
    ref_it = ref["loop_s"] / ref["n_iter"]
    for name, r in rows.items():
        it = r.get("loop_s", r["fit_s"]) / r["n_iter"]
        print(f"| {name} | {r['fit_s']:.1f} | {r['fit_s'] / ref['fit_s']:.3f} | {r['n_iter']} | "
              f"{it:.3f} | {it / ref_it:.3f} | "
              f"{r['objective']:.2f} | "
              f"{(r['objective'] - ref['objective']) / ref['objective']:+.1e}"
              f" | {r['fit_added_mb']:.0f} | {r['fit_added_mb'] / max(ref['fit_added_mb'], 1):.2f}"
              f" | {r['predict_tps']:,.0f} | {r['predict_tps'] / ref['predict_tps']:.1f} | "
              f"{r['first_predict_tps']:,.0f} | "
              f"{r['first_predict_tps'] / ref['first_predict_tps']:.1f} | {r['accuracy']:.4f} |")
    print(f"skcrf first fit of this shape (warm cache): +{s1['first_fit_extra_s']:.2f} s "
          f"(1 thread), +{rows['skcrf 2 threads']['first_fit_extra_s']:.2f} s (2 threads); "
          f"one evaluation (1 thread) {s1['eval_s'] * 1e3:.1f} ms, lower bound "
          f"{lb * 1e3:.1f} ms ({s1['lb_bytes'] / 1e6:.1f} MB streamed, "
          f"{s1['lb_madds'] / 1e6:.1f} M multiply-adds): {s1['eval_s'] / lb:.1f}x the bound")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--corpora", default=",".join(LABELS))
    ap.add_argument("--c2", type=float, default=1.0)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--limit", type=int, default=None,
                    help="training sentences of every corpus (default: per corpus)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--skip-crfsuite", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--corpus")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    if args.child:
        fn = {"crfsuite": child_crfsuite, "skcrf": child_skcrf,
              "machine": lambda a: child_machine()}[args.child]
        print(json.dumps(fn(args)))
        return
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        args.tmp = tmp
        mach = spawn(args, "machine")
        print(f"# Label sweep, c2={args.c2}, c1=0 — {date.today()} — {machine()}")
        print(f"# streaming read {mach['bw'] / 1e9:.1f} GB/s, dgemm "
              f"{mach['madd'] / 1e9:.1f} G multiply-adds/s (1 thread)")
        for corpus in args.corpora.split(","):
            rounds = []
            for _ in range(args.rounds):
                rnd = {"skcrf 1 thread": spawn(args, "skcrf", corpus, 1),
                       "skcrf 2 threads": spawn(args, "skcrf", corpus, 2)}
                if not args.skip_crfsuite:
                    rnd["CRFsuite"] = spawn(args, "crfsuite", corpus)
                rounds.append(rnd)
            rows = {name: min((r[name] for r in rounds), key=lambda r: r["fit_s"])
                    for name in rounds[0]}
            if "CRFsuite" in rows:
                report(corpus, rows, mach)
            else:
                print(corpus, json.dumps(rows))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
