"""A/B of a kernel change with paired measurements: two checkouts of skcrf
loaded side by side in one process, their objective evaluations alternating.

``ab_evaluation.py`` runs each checkout in its own processes; on a VM whose
speed drifts by 10-20 % within minutes, that compares different stretches of
time. Here both versions evaluate the same problem in turn, and the median
of the per-pair ratios (B / A) cancels the drift. Each checkout's ``skcrf``
package is copied under another name (``skcrf_a``, ``skcrf_b``: the package
imports itself only relatively), so both compile and cache their own kernels.

    python benchmarks/dev/ab_inprocess.py /path/to/checkout_A /path/to/checkout_B \\
        --problem conll2002 --threads 1 --reps 30

Problems: ``conll2002`` (``--data``), ``sxu`` (``--sxu-data``, the
``bench_sxu.py`` features), ``synthetic22`` (``bench_memory.SYNTH``), and
every corpus of the label sweep (``_corpora.py``: ``gsd-xpos``, ``esp-pos``,
``synth-100``, ...; ``--sweep-data``, ``--limit``).

``--predict`` times ``predict`` instead, on CoNLL-2002's test set (esp.testb),
with a model each checkout fits in 30 iterations (both the same weights):

    python benchmarks/dev/ab_inprocess.py A B --predict --reps 200

and ``--predict --marginals`` times ``predict_marginals``.
"""

import argparse
import importlib
import os
import shutil
import sys
import tempfile
import time
from datetime import date

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "claims")]


def load_problem(problem, data, sxu_data, sweep=None):
    """(Sequences, label sequences) of the training set."""
    from _corpora import LABELS, build

    if problem in LABELS:
        Xtr, ytr, _, _, _ = build(problem, sweep.sweep_data, sweep.limit)
        return Xtr, ytr
    if problem == "conll2002":
        from _common import load_conll2002, vectorise

        Xtr, ytr, Xte, _ = load_conll2002(data)
        S, _ = vectorise(Xtr, Xte)
        return S, ytr
    if problem == "sxu":
        from bench_sxu import featurise

        _, S, ytr, _, _ = featurise(sxu_data, None)
        return S, ytr
    from bench_memory import SYNTH
    from synthetic import make_corpus

    return make_corpus(**SYNTH)


def main():
    from _corpora import LABELS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs=2)
    ap.add_argument("--problem", default="conll2002",
                    choices=["conll2002", "sxu", "synthetic22", *LABELS])
    ap.add_argument("--sweep-data", default=os.path.join(HERE, "..", "..", "..", "shared",
                                                          "data"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "..", "shared", "data",
                                                    "conll2002"))
    ap.add_argument("--sxu-data", default=os.path.join(HERE, "..", "..", "..", "shared", "data",
                                                        "sighan2008_sxu"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--predict", action="store_true",
                    help="time predict on CoNLL-2002's test set instead")
    ap.add_argument("--max-iter", type=int, default=30,
                    help="with --predict: iterations of the model each checkout fits")
    ap.add_argument("--marginals", action="store_true",
                    help="with --predict: time predict_marginals instead of predict")
    args = ap.parse_args()
    from _common import machine, skcrf_module

    # a fixed place, and copies that keep the files' times: a second run with
    # the same checkouts finds its kernels in Numba's cache
    tmp = os.path.join(tempfile.gettempdir(), "skcrf_ab_inprocess")
    names = []
    for checkout, name in zip(args.checkouts, ("skcrf_a", "skcrf_b")):
        shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
        shutil.copytree(os.path.join(checkout, "skcrf"), os.path.join(tmp, name),
                        ignore=shutil.ignore_patterns("__pycache__"))
        names.append(name)
    sys.path.insert(0, tmp)
    if args.predict:
        return compare_predict(args, names, machine)
    S, ytr = load_problem(args.problem, args.data, args.sxu_data, args)
    classes, y = np.unique(np.concatenate([np.asarray(s) for s in ytr]),
                           return_inverse=True)
    y = y.astype(np.int32).reshape(-1)
    losses, theta, values = {}, None, {}
    for name in names:
        objective = skcrf_module(name, "loss")
        layout_mod = skcrf_module(name, "layout")
        parallel = skcrf_module(name, "parallel")
        arrays, w = S.kernel_arrays(), np.ones(len(S))
        counts = layout_mod.count_pairs(arrays, y, w, classes.size, S.n_features)
        layout = layout_mod.build_layout(counts, all_possible_transitions=False,
                                         start_end=False)
        if theta is None:
            theta = np.random.default_rng(0).normal(scale=0.1, size=layout.n_params)
        loss = objective.CRFLoss(arrays, y, w, layout, counts, n_threads=args.threads)
        with parallel.numba_threads(args.threads):
            values[name] = loss(theta)    # compiles (or loads) the kernels
        losses[name] = (loss, parallel)
    (fa, ga), (fb, gb) = values.values()
    def evaluate(name):
        loss, parallel = losses[name]
        with parallel.numba_threads(args.threads):
            loss(theta)

    a, b = alternate(evaluate, names, args.reps)
    print(f"# {args.problem}, {args.threads} thread(s), {args.reps} alternating pairs — "
          f"{date.today()} — {machine()}")
    print(f"# A = {args.checkouts[0]}, B = {args.checkouts[1]}; objective A {fa!r}, "
          f"B {fb!r}; gradients differ by at most {np.abs(ga - gb).max():.2e}")
    report_pairs(a, b, digits=1)


def alternate(call, names, reps):
    """Run ``call(name)`` for each name in turn, ``reps`` times; the times of
    each name in ms, as arrays (pair k: the k-th time of each)."""
    times = {name: [] for name in names}
    for _ in range(reps):
        for name in names:
            t = time.perf_counter()
            call(name)
            times[name].append(time.perf_counter() - t)
    return [np.array(times[name]) * 1e3 for name in names]


def report_pairs(a, b, digits):
    """Print each side's minimum and quartiles and the per-pair ratio B / A."""
    for label, v in (("A", a), ("B", b)):
        q = [np.percentile(v, p) for p in (25, 50, 75)]
        print(f"{label}: min {v.min():.{digits}f} ms, quartiles "
              + " / ".join(f"{x:.{digits}f}" for x in q) + " ms")
    r = b / a
    print(f"B / A per pair: median {np.median(r):.3f} (quartiles "
          f"{np.percentile(r, 25):.3f} - {np.percentile(r, 75):.3f})")


def compare_predict(args, names, machine):
    """Alternate the two checkouts' ``predict`` on CoNLL-2002's test set (or
    on the test split of a sweep corpus)."""
    import warnings

    from _common import load_conll2002, vectorise
    from _corpora import LABELS, build

    if args.problem in LABELS:
        Str, ytr, Ste, _, _ = build(args.problem, args.sweep_data, args.limit)
    else:
        Xtr, ytr, Xte, _ = load_conll2002(args.data)
        Str, Ste = vectorise(Xtr, Xte)
    models, preds = {}, {}
    for name in names:
        pkg = importlib.import_module(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # (30 iterations: not converged)
            model = pkg.LinearChainCRF(c2=1.0, max_iter=args.max_iter,
                                       all_possible_transitions=False,
                                       start_end_transitions=False, n_jobs=args.threads)
            model.fit(pkg.Sequences(Str.X, Str.lengths), ytr)
        X = pkg.Sequences(Ste.X, Ste.lengths)
        call = "predict_marginals" if args.marginals else "predict"
        preds[name] = getattr(model, call)(X)   # compiles (or loads) the kernels
        models[name] = (model, X)
    a, b = alternate(lambda name: getattr(models[name][0], call)(models[name][1]), names,
                     args.reps)
    if args.marginals:      # (lists of arrays: the largest difference)
        diff = max((float(np.abs(p - q).max()) for p, q in zip(*preds.values()) if p.size),
                   default=0.0)
        same = f"max |difference| {diff:.1e}"
    else:
        same = preds[names[0]] == preds[names[1]]
    print(f"# {call}, {args.problem} test ({Ste.n_tokens:,} tokens), {args.threads} "
          f"thread(s), {args.reps} alternating pairs — {date.today()} — {machine()}")
    print(f"# A = {args.checkouts[0]}, B = {args.checkouts[1]}; same predictions: {same}")
    report_pairs(a, b, digits=2)


if __name__ == "__main__":
    main()
