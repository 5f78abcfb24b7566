"""How the cost of an objective evaluation grows with tokens, labels and features.

On synthetic corpora (``synthetic.make_corpus``: Zipf-distributed binary
features, Markov-chain labels, about 16 non-zeros per token) it measures, each case
in its own process:

* ``s/eval``: one objective + gradient evaluation (what each L-BFGS iteration
  costs, line-search steps aside), median of 3 after a warm-up, for
  ``n_jobs=1`` and ``n_jobs=2``;
* ``ns per token·label²`` and ``ns per nnz·label``: the cost normalised by the
  two terms of the model, tokens x labels² (forward-backward and transition
  marginals) and non-zeros x labels (emission scores and state gradient);
* ``fit`` wall time of 3 L-BFGS iterations through the public
  ``LinearChainCRF.fit`` (validation, layout, empirical counts included) and its
  peak RSS (VmHWM reset just before ``fit``; the corpus itself is included).

Sweeps: tokens 10^4 .. 10^7 (10^5 features, 10 labels); labels 5 .. 50
(10^5 tokens); features 10^4 .. 10^6 (10^6 tokens, 10 labels); labels 10 ..
50 at 10^6 features (10^5 tokens), where the memory per parameter shows
(``fit adds MB``: the peak above the RSS ``fit`` started from). Then a
non-negative least-squares fit of s/eval = a·tokens·L² + b·nnz·L over all cases shows how
well the two-term model explains the measurements.

    python benchmarks/claims/bench_scaling.py            # all sweeps, ~8 min on 2 cores
    python benchmarks/claims/bench_scaling.py --quick    # the small cases only
    python benchmarks/claims/bench_scaling.py --sweep 4  # one sweep (1-4)
"""

import argparse
import json
import os
import sys
import time
from datetime import date

import numpy as np
from scipy.optimize import nnls

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import HERE, machine, run_json_child, timed_fit

TOKENS = [10_000, 100_000, 1_000_000, 10_000_000]
LABELS = [5, 10, 20, 50]
FEATURES = [10_000, 100_000, 1_000_000]


def run_child(n_tokens, n_features, n_labels):
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from synthetic import make_corpus

    from skcrf import LinearChainCRF
    from skcrf._training.layout import build_layout, count_pairs
    from skcrf._training.loss import CRFLoss, Objective
    from skcrf._training.penalty import ElasticNet

    t = time.perf_counter()
    X, y = make_corpus(n_tokens, n_features, n_labels)
    out = dict(tokens=int(X.n_tokens), features=n_features, labels=n_labels,
               nnz=int(X.X.nnz), generate_s=time.perf_counter() - t)
    # load the compiled kernels, serial and parallel, optimiser included, so
    # that the timed fit's memory is the fit's and not the code's
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n_jobs in (1, -1):
            LinearChainCRF(max_iter=3, n_jobs=n_jobs).fit(X[:20], y[:20])
    flat = np.concatenate(y).astype(np.int32)
    arrays, weights = X.kernel_arrays(), np.ones(len(X))
    counts = count_pairs(arrays, flat, weights, n_labels, X.n_features)
    layout = build_layout(counts)
    out["params"] = int(layout.n_params)
    theta = np.random.default_rng(0).normal(scale=0.1, size=layout.n_params)
    for n_threads in (1, 2):
        obj = Objective([CRFLoss(arrays, flat, weights, layout, counts, n_threads)],
                        ElasticNet(0.0, 1.0))
        obj(theta)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            obj(theta)
            times.append(time.perf_counter() - t)
        out[f"eval_s_{n_threads}"] = float(np.median(times))
        del obj
    del layout, theta, flat, counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = timed_fit(LinearChainCRF(c2=1.0, max_iter=3, n_jobs=-1), X, y)
    out["fit3_s"], out["fit_peak_rss_mb"] = fit["fit_s"], fit["fit_peak_rss_mb"]
    out["fit_adds_mb"] = fit["fit_peak_rss_mb"] - fit["rss_before_fit_mb"]
    print(json.dumps(out), flush=True)


def run_case(n_tokens, n_features, n_labels):
    return run_json_child(
        [sys.executable, __file__, "--child", f"{n_tokens},{n_features},{n_labels}"],
        {"PYTHONPATH": os.pathsep.join([os.path.join(HERE, ".."), HERE,
                                        os.environ.get("PYTHONPATH", "")])})


def row(r):
    e1, e2 = r["eval_s_1"], r["eval_s_2"]
    tl2 = r["tokens"] * r["labels"] ** 2
    nl = r["nnz"] * r["labels"]
    return (f"| {r['tokens']:,} | {r['features']:,} | {r['labels']} | {r['nnz']:,} | "
            f"{r['params']:,} | {e1:.4f} | {e2:.4f} | {e1 / e2:.2f} | "
            f"{e1 * 1e9 / tl2:.2f} | {e1 * 1e9 / nl:.2f} | {r['fit3_s']:.1f} | "
            f"{r['fit_peak_rss_mb']:,.0f} | {r['fit_adds_mb']:,.0f} | "
            f"{r['fit_adds_mb'] * 2**20 / r['params']:,.0f} |")


HEADER = ("| tokens | features | labels | nnz | parameters | s/eval 1 thread | "
          "s/eval 2 threads | speed-up | ns per token·L² | ns per nnz·L | "
          "fit 3 iter s | fit peak RSS MB | fit adds MB | added bytes / parameter |\n|"
          + "---|" * 14)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="skip the 10^7-token and 10^6-feature cases")
    ap.add_argument("--sweep", type=int, default=None, help="run only this sweep (1-4)")
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    if args.child:
        run_child(*(int(v) for v in args.child.split(",")))
        return
    tokens = TOKENS[:2] if args.quick else TOKENS
    labels = LABELS[:3] if args.quick else LABELS
    features = FEATURES[:2] if args.quick else FEATURES
    print(f"# Scaling of one objective evaluation, synthetic corpora — {date.today()} "
          f"— {machine()}")
    results = []
    sweeps = [("tokens (10^5 features, 10 labels)", [(t, 100_000, 10) for t in tokens]),
              ("labels (10^5 tokens, 10^5 features)", [(100_000, 100_000, L) for L in labels]),
              ("features (10^6 tokens, 10 labels)", [(1_000_000, f, 10) for f in features]),
              ("labels at 10^6 features (10^5 tokens)",
               [(100_000, 1_000_000, L) for L in labels if L >= 10])]
    if args.sweep:
        sweeps = [sweeps[args.sweep - 1]]
    done = {}
    for title, cases in sweeps:
        print(f"\n## {title}\n{HEADER}", flush=True)
        for case in cases:
            if case not in done:
                done[case] = run_case(*case)
                results.append(done[case])
            print(row(done[case]), flush=True)
    # two-term cost model, non-negative least squares on relative error
    T = np.array([r["tokens"] * r["labels"] ** 2 for r in results], float)
    N = np.array([r["nnz"] * r["labels"] for r in results], float)
    e = np.array([r["eval_s_1"] for r in results])
    A = np.column_stack([T, N]) / e[:, None]
    (a, b), _ = nnls(A, np.ones_like(e))  # costs cannot be negative
    pred = a * T + b * N
    print(f"\nmodel (1 thread): s/eval = {a * 1e9:.2f} ns x tokens·L² + {b * 1e9:.2f} ns x nnz·L; "
          f"measured / model over all cases: {np.min(e / pred):.2f} .. {np.max(e / pred):.2f}")


if __name__ == "__main__":
    main()
