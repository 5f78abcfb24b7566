"""Coming from sklearn-crfsuite: the tutorial with only the import changed, dict
vectorisation, and L1 / elastic net against CRFsuite, on CoNLL-2002 Spanish.

Every measurement runs in its own process; peak RSS is the high-water mark
reset just after the feature dicts are built (so it is what the step adds on
top of its input), reported as MB above the RSS at that moment.

1. ``vectorize``: the tutorial's feature dicts of esp.train + esp.testb to a
   sparse matrix, ``SequenceDictVectorizer`` against scikit-learn's
   ``DictVectorizer`` (the previous documented way), time and memory.
2. ``tutorial``: sklearn-crfsuite's tutorial estimator,
   ``CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100,
   all_possible_transitions=True)``, fitted on the dicts by sklearn-crfsuite
   and by ``skcrf.compat.CRF`` (the same code, only the import changed):
   fit time, peak memory of the whole workflow (vectorise + fit), the
   tutorial's score (token F1 weighted over the labels other than O) and
   entity F1 on esp.testb.
3. ``l1``: the same with c1 = c2 = 0.1 trained to convergence (CRFsuite's
   defaults: delta 1e-5 over 10 iterations): objective, non-zero weights,
   fit time, F1.

    python benchmarks/claims/bench_migration.py --data ../shared/data/conll2002
"""

import argparse
import gc
import json
import os
import sys
import time
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import (
    DEFAULT_DATA,
    load_conll2002,
    machine,
    reset_peak_rss,
    run_json_child,
    vm_hwm_mb,
    vm_rss_mb,
)


def _measure(fn):
    gc.collect()
    reset_peak_rss()
    before = vm_rss_mb()
    t = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t, vm_hwm_mb() - before


def _scores(y_true, y_pred, labels):
    from skcrf.compat.metrics import flat_f1_score
    from skcrf.metrics import span_f1_score

    return {"tutorial_f1": flat_f1_score(y_true, y_pred, average="weighted",
                                         labels=[lab for lab in labels if lab != "O"]),
            "entity_f1": span_f1_score(y_true, y_pred, scheme="BIO")}


def child(task, args):
    Xtr, ytr, Xte, yte = load_conll2002(args.data, args.limit)
    out = {"task": task}
    if task.startswith("vectorize"):
        if task == "vectorize-skcrf":
            from skcrf import SequenceDictVectorizer

            def run():
                v = SequenceDictVectorizer(separator=":")
                return v.fit_transform(Xtr), v.transform(Xte)
        else:
            from sklearn.feature_extraction import DictVectorizer

            def run():
                dv = DictVectorizer(separator=":")
                flat = lambda fs: [d for seq in fs for d in seq]  # noqa: E731
                return dv.fit_transform(flat(Xtr)), dv.transform(flat(Xte))
        (A, _), out["seconds"], out["added_mb"] = _measure(run)
        M = A.X if hasattr(A, "X") else A   # Sequences or CSR
        out["n_features"], out["nnz"] = int(M.shape[1]), int(M.nnz)
        print(json.dumps(out))
        return
    engine = task.split("-")[1]
    if engine == "skcrf":
        import skcrf.compat as crfsuite_module
        from skcrf.compat import CRF
        CRF(max_iterations=1).fit(Xtr[:3], ytr[:3])   # load the compiled kernels
    else:
        import sklearn_crfsuite as crfsuite_module
    kw = dict(algorithm="lbfgs", c1=0.1, c2=0.1, all_possible_transitions=True)
    if task.startswith("tutorial"):
        kw["max_iterations"] = 100
    crf = crfsuite_module.CRF(**kw)
    _, out["fit_s"], out["added_mb"] = _measure(lambda: crf.fit(Xtr, ytr))
    t = time.perf_counter()
    pred = crf.predict(Xte)
    out["predict_s"] = time.perf_counter() - t
    out.update(_scores(yte, pred, list(crf.classes_)))
    log = crf.training_log_
    out["n_iter"] = len(log.iterations)
    out["objective"] = log.last_iteration["loss"]
    out["nonzero"] = len(crf.state_features_) + len(crf.transition_features_)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--child", default=None)
    ap.add_argument("--repeat", type=int, default=5, help="vectoriser runs per side")
    args = ap.parse_args()
    if args.child:
        return child(args.child, args)

    def spawn(task):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", task, "--data",
               args.data] + (["--limit", str(args.limit)] if args.limit else [])
        return run_json_child(cmd)

    print(f"# sklearn-crfsuite migration, CoNLL-2002 Spanish — {date.today()} — {machine()}")
    runs = {"skcrf": [], "dictvectorizer": []}
    for _ in range(args.repeat):               # alternating, each in a new process
        for t in runs:
            runs[t].append(spawn(f"vectorize-{t}"))
    print(f"\n| vectoriser (train + testb), median of {args.repeat} | seconds | MB added | "
          "features | non-zeros |")
    print("|---|---|---|---|---|")
    v = {}
    for t, rs in runs.items():
        v[t] = {k: sorted(r[k] for r in rs)[len(rs) // 2] for k in rs[0] if k != "task"}
        r = v[t]
        print(f"| {t} | {r['seconds']:.2f} | {r['added_mb']:.0f} | {r['n_features']:,} | "
              f"{r['nnz']:,} |")
    ratios = sorted(a["seconds"] / b["seconds"] for a, b in zip(runs["skcrf"],
                                                                  runs["dictvectorizer"]))
    ratio = v['skcrf']['seconds'] / v['dictvectorizer']['seconds']
    print(f"SequenceDictVectorizer / DictVectorizer: time {ratio:.2f}x "
          f"(per pair of runs: {', '.join(f'{r:.2f}' for r in ratios)}), memory "
          f"{v['skcrf']['added_mb'] / v['dictvectorizer']['added_mb']:.2f}x")
    for what, title in (("tutorial", "tutorial: c1=0.1, c2=0.1, max_iterations=100"),
                        ("l1", "c1=0.1, c2=0.1 to convergence")):
        rows = {e: spawn(f"{what}-{e}") for e in ("skcrf", "crfsuite")}
        print(f"\n{title}\n| engine | fit s | iterations | objective | non-zero weights | "
              "fit MB added | tutorial F1 (flat, weighted, no O) | entity F1 |")
        print("|---|---|---|---|---|---|---|---|")
        for e, r in rows.items():
            print(f"| {e} | {r['fit_s']:.1f} | {r['n_iter']} | {r['objective']:.2f} | "
                  f"{r['nonzero']:,} | {r['added_mb']:.0f} | {r['tutorial_f1']:.4f} | "
                  f"{r['entity_f1']:.4f} |")
        a, b = rows["skcrf"], rows["crfsuite"]
        print(f"skcrf / CRFsuite: fit {a['fit_s'] / b['fit_s']:.2f}x, memory "
              f"{a['added_mb'] / b['added_mb']:.2f}x, objective rel. diff "
              f"{(a['objective'] - b['objective']) / b['objective']:+.2e}, tutorial F1 "
              f"{a['tutorial_f1'] - b['tutorial_f1']:+.4f}, entity F1 "
              f"{a['entity_f1'] - b['entity_f1']:+.4f}", flush=True)


if __name__ == "__main__":
    main()
