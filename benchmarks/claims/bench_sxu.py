"""SIGHAN 2008 SXU word segmentation: skcrf against sklearn-crfsuite, same features.

The features come from skcrf's SequenceFeaturizer (default templates plus a
dictionary of the training words seen >= 5 times), fitted once; CRFsuite gets
each token's active feature names as its attribute list, skcrf the CSR matrix.
Same objective: c1=0, c2=1, transitions only for seen label pairs, no
start/end weights. Each engine runs in its own process.

    python benchmarks/claims/bench_sxu.py --data ../shared/data/sighan2008_sxu [--limit N]
"""

import argparse
import json
import os
import sys
import time
from collections import Counter
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, first_call, machine, run_json_child, timed_fit


def featurise(data, limit):
    from skcrf import SequenceFeaturizer
    from skcrf.segmentation import read_segmented, words_to_tags

    train = read_segmented(os.path.join(data, "train.txt"))[:limit]
    test = read_segmented(os.path.join(data, "test.txt"))
    counts = Counter(w for s in train for w in s)
    f = SequenceFeaturizer(dictionary={w for w, c in counts.items() if c >= 5})
    Xtr = f.fit_transform(["".join(s) for s in train])
    Xte = f.transform(["".join(s) for s in test])
    ytr = [words_to_tags(s) for s in train]
    yte = [words_to_tags(s) for s in test]
    return f, Xtr, ytr, Xte, yte


def as_attribute_lists(seqs, names):
    """CRFsuite's input: per sequence, per token, the list of active feature names."""
    X = seqs.X
    out = []
    for s in range(len(seqs)):
        rows = []
        for t in range(seqs.offsets[s], seqs.offsets[s + 1]):
            rows.append(names[X.indices[X.indptr[t]:X.indptr[t + 1]]].tolist())
        out.append(rows)
    return out


def run_child(engine, args):
    from skcrf.metrics import span_f1_score

    out = {"engine": engine}
    f, Str, ytr, Ste, yte = featurise(args.data, args.limit)
    out["n_tokens"] = int(Str.n_tokens)
    if engine == "crfsuite":
        import sklearn_crfsuite

        names = f.get_feature_names_out()
        Xtr, Xte = as_attribute_lists(Str, names), as_attribute_lists(Ste, names)
        del Str, Ste
        model = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=args.c2,
                                     max_iterations=1000, all_possible_transitions=False)
        out.update(timed_fit(model, Xtr, ytr))
        out["n_iter"] = len(model.training_log_.iterations)
        out["objective"] = model.training_log_.last_iteration["loss"]
        Xpred = Xte
    else:
        from skcrf import LinearChainCRF

        first_call()  # compile or load every kernel (fit and predict, 1 and 2 threads)
        model = LinearChainCRF(c2=args.c2, all_possible_transitions=False,
                               start_end_transitions=False, n_jobs=args.n_jobs)
        out.update(timed_fit(model, Str, ytr))
        out["n_iter"] = model.n_iter_
        out["objective"] = model.objective_
        Xpred = Ste
    t = time.perf_counter()
    pred = model.predict(Xpred)
    out["predict_tokens_per_s"] = sum(map(len, yte)) / (time.perf_counter() - t)
    out["word_f1"] = span_f1_score(yte, pred, scheme="BMES")
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "sighan2008_sxu"))
    ap.add_argument("--c2", type=float, default=1.0)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--n-jobs", type=int, default=None)
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    if args.child:
        return run_child(args.child, args)
    print(f"# SIGHAN 2008 SXU, c2={args.c2}, c1=0 — {date.today()} — {machine()}")
    rows = {}
    for name, engine, n_jobs in (("skcrf n_jobs=1", "skcrf", 1),
                                 ("skcrf n_jobs=-1", "skcrf", -1),
                                 ("CRFsuite", "crfsuite", None)):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", engine,
               "--data", args.data, "--c2", str(args.c2)]
        if args.limit:
            cmd += ["--limit", str(args.limit)]
        if n_jobs is not None:
            cmd += ["--n-jobs", str(n_jobs)]
        rows[name] = run_json_child(cmd)
        r = rows[name]
        r["s_per_iter"] = r["fit_s"] / max(r["n_iter"], 1)
        print(f"| {name} | {r['fit_s']:.1f} s | {r['n_iter']} it | {r['s_per_iter']:.3f} s/it "
              f"| objective {r['objective']:.2f} | fit peak RSS {r['fit_peak_rss_mb']:.0f} MB "
              f"| predict {r['predict_tokens_per_s']:,.0f} tok/s | word F1 {r['word_f1']:.4f} |",
              flush=True)
    ref = rows["CRFsuite"]
    for name in ("skcrf n_jobs=1", "skcrf n_jobs=-1"):
        r = rows[name]
        print(f"{name} / CRFsuite: fit {r['fit_s'] / ref['fit_s']:.3f}x, s/iter "
              f"{r['s_per_iter'] / ref['s_per_iter']:.3f}x, objective rel. diff "
              f"{(r['objective'] - ref['objective']) / ref['objective']:+.2e}, fit peak RSS "
              f"{r['fit_peak_rss_mb'] / ref['fit_peak_rss_mb']:.2f}x, predict "
              f"{r['predict_tokens_per_s'] / ref['predict_tokens_per_s']:.1f}x")


if __name__ == "__main__":
    main()
