"""Memory that ``fit`` adds, skcrf against CRFsuite, on CoNLL-2002 and on a
22-label synthetic corpus with ~6 % active (feature, label) pairs.

Each engine runs in its own process. The RSS high-water mark is reset just
before ``fit`` (after the input is in memory: feature dicts / attribute lists
for CRFsuite, the CSR matrix for skcrf); the figure is the peak minus the RSS
``fit`` started from. Both engines run the same number of L-BFGS iterations
(``--max-iter``, default 40: past the optimiser's memory of 10 steps, so the
peak is reached), c2=1, transitions only for seen pairs, no start/end weights.

    python benchmarks/claims/bench_memory.py --data ../shared/data/conll2002
"""

import argparse
import os
import sys
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, load_conll2002, machine, run_json_child, timed_fit, vectorise

HERE = os.path.dirname(os.path.abspath(__file__))

# the synthetic corpus: sized like the held-out 22-label chunking corpus of
# issue 16 (212k tokens, 339k features, ~20 non-zeros per token)
SYNTH = dict(n_tokens=212_000, n_features=339_000, n_labels=22, nnz_per_token=20,
             zipf=1.25, seed=0)   # 6.9 % of the (feature, label) pairs occur


def load(corpus, data):
    """(skcrf input, CRFsuite input, labels) of a corpus."""
    if corpus == "conll2002":
        Xtr, ytr, Xte, _ = load_conll2002(data)
        S, _ = vectorise(Xtr, Xte)
        return S, Xtr, ytr
    sys.path.insert(0, os.path.join(HERE, ".."))
    import numpy as np
    from synthetic import make_corpus

    S, y = make_corpus(**SYNTH)
    X = S.X
    names = np.array([f"f{j}" for j in range(X.shape[1])], dtype=object)
    attrs = [names[X.indices[X.indptr[t]:X.indptr[t + 1]]].tolist() for t in range(X.shape[0])]
    seqs, k = [], 0
    for n in S.lengths:
        seqs.append(attrs[k:k + n])
        k += n
    labels = [[f"L{v}" for v in s] for s in y]
    return S, seqs, labels


def _warm_up(n_jobs):
    """Load the compiled kernels before the measured fit, both the dense and the
    compact state-weight layouts' (a tiny fit made to take each): what loading
    them costs is not what a fit needs."""
    import warnings

    import numpy as np

    import skcrf._training.loss as objective
    from skcrf import LinearChainCRF

    rng = np.random.default_rng(0)
    X = [(rng.random((8, 30)) < 0.2).astype(float) for _ in range(40)]
    y = [list(rng.choice(["a", "b", "c"], 8)) for _ in range(40)]
    saved = objective._COMPACT_MIN_BYTES, objective._COMPACT_MAX_FILL
    try:
        for forced in (None, (-1, 2.0)):
            if forced:
                objective._COMPACT_MIN_BYTES, objective._COMPACT_MAX_FILL = forced
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                LinearChainCRF(max_iter=2, n_jobs=n_jobs).fit(X, y)
    finally:
        objective._COMPACT_MIN_BYTES, objective._COMPACT_MAX_FILL = saved


def child(engine, corpus, args):
    S, X_crfsuite, y = load(corpus, args.data)
    out = {"tokens": int(S.n_tokens), "features": int(S.n_features)}
    if engine == "crfsuite":
        import sklearn_crfsuite

        del S
        model = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=1.0,
                                     max_iterations=args.max_iter,
                                     all_possible_transitions=False)
        out.update(timed_fit(model, X_crfsuite, y))
        out["n_iter"] = len(model.training_log_.iterations)
        out["n_params"] = model.training_log_.last_iteration.get("active_features")
    else:
        from skcrf import LinearChainCRF

        del X_crfsuite
        _warm_up(args.n_jobs)
        model = LinearChainCRF(c2=1.0, max_iter=args.max_iter, tol=0.0,
                               all_possible_transitions=False, start_end_transitions=False,
                               n_jobs=args.n_jobs)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.update(timed_fit(model, S, y))
        out["n_iter"] = model.n_iter_
        out["n_params"] = model.n_params_
        out["labels"] = len(model.classes_)
    out["added_mb"] = out["fit_peak_rss_mb"] - out["rss_before_fit_mb"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    ap.add_argument("--max-iter", type=int, default=40)
    ap.add_argument("--corpora", nargs="*", default=["conll2002", "synthetic22"])
    ap.add_argument("--child", nargs=2, default=None)
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args()
    if args.child:
        import json

        print(json.dumps(child(args.child[0], args.child[1], args)))
        return
    print(f"# Memory that fit adds above its starting RSS — {date.today()} — {machine()}; "
          f"{args.max_iter} L-BFGS iterations, c2=1")
    print("| corpus | engine | parameters | added MB | bytes / parameter | fit s | "
          "ratio to CRFsuite |\n|---|---|---|---|---|---|---|", flush=True)
    for corpus in args.corpora:
        runs = []
        for engine, n_jobs in (("crfsuite", 1), ("skcrf", 1), ("skcrf", 2)):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, corpus,
                   "--data", args.data, "--max-iter", str(args.max_iter),
                   "--n-jobs", str(n_jobs)]
            r = run_json_child(cmd)
            name = "CRFsuite" if engine == "crfsuite" else f"skcrf n_jobs={n_jobs}"
            runs.append((name, r))
        base = runs[0][1]["added_mb"]
        for name, r in runs:
            print(f"| {corpus} ({r['tokens']:,} tokens, {r['features']:,} features) | {name} | "
                  f"{r['n_params']:,} | {r['added_mb']:.0f} | "
                  f"{r['added_mb'] * 2**20 / r['n_params']:.0f} | {r['fit_s']:.1f} | "
                  f"{r['added_mb'] / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
