"""Word segmentation on SIGHAN 2008 SXU: WordSegmenter's defaults, an ablation,
the naive dictionary path, and spacy-pkuseg trained on the same files.

Every setting trains on train.txt and is scored once on test.txt (word
precision / recall / F1 and OOV recall as the SIGHAN scorer defines them);
the defaults were chosen on a split of train.txt (``cws_tuning.py``), never on
test.txt. Each run is a process of its own; fit time includes featurisation.

    pip install spacy-pkuseg          # for the comparison row
    python benchmarks/claims/bench_cws.py --data ../shared/data/sighan2008_sxu
    python benchmarks/claims/bench_cws.py --only default pkuseg   # some rows
"""

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, machine, run_json_child

# name: (description, WordSegmenter kwargs) -- the ablation removes one
# component of the defaults at a time, then adds the test text
ROWS = {
    "default": ("WordSegmenter() (all defaults)", {}),
    "with_test_text": ("WordSegmenter(unlabeled_text=<raw test text>)", {"unlabeled": True}),
    "no_oov_model": ("defaults without the OOV model (oov_model=False: the defaults "
                     "before 2026-12-02)", {"oov_model": False}),
    "no_dictionary": ("defaults without dictionary features", {"dictionary": None}),
    "no_dictionary_with_test_text": ("defaults without dictionary features, with the raw "
                                     "test text as unlabeled text",
                                     {"dictionary": None, "unlabeled": True}),
    "no_jackknife": ("defaults, dictionary not jackknifed", {"dictionary_folds": 1}),
    "av_not_jackknifed": ("defaults, accessor variety not jackknifed",
                          {"accessor_variety_folds": 1}),
    "no_av": ("defaults without accessor variety", {"accessor_variety": None}),
    "no_classes": ("defaults without character classes", {"char_classes": False}),
    "four_tags": ("defaults with BMES tags", {"tags": "BMES"}),
    "c2_1": ("defaults with c2=1 (the previous default)", {"c2": 1.0}),
    "plain": ("4 tags, n-grams and types only, c2=1 (the first default)",
              {"tags": "BMES", "dictionary": None, "accessor_variety": None,
               "char_classes": False, "c2": 1.0}),
}


def read(data):
    from skcrf.segmentation import read_segmented

    return (read_segmented(os.path.join(data, "train.txt")),
            read_segmented(os.path.join(data, "test.txt")))


def score(train, test, pred):
    from skcrf.metrics import segmentation_scores

    s = segmentation_scores(test, pred, train_words={w for ws in train for w in ws})
    return {k: s[k] for k in ("precision", "recall", "f1", "oov_recall", "iv_recall")}


def child_skcrf(name, args):
    from skcrf import WordSegmenter

    train, test = read(args.data)
    X, Xt = ["".join(s) for s in train], ["".join(s) for s in test]
    WordSegmenter(max_iter=1).fit(X[:20], train[:20])   # load the compiled kernels
    kw = dict(ROWS[name][1])
    if kw.pop("unlabeled", False):
        kw["unlabeled_text"] = Xt
    seg = WordSegmenter(n_jobs=args.n_jobs, **kw)
    t = time.perf_counter()
    seg.fit(X, train)
    out = {"fit_s": time.perf_counter() - t, "n_iter": seg.crf_.n_iter_,
           "n_features": seg.featurizer_.n_features_out_}
    t = time.perf_counter()
    pred = seg.predict(Xt)
    out["chars_per_s"] = sum(map(len, Xt)) / (time.perf_counter() - t)
    out.update(score(train, test, pred))
    return out


def child_naive(args):
    """What a user writes first: every training word as the dictionary."""
    from sklearn.pipeline import make_pipeline

    from skcrf import LinearChainCRF, SequenceFeaturizer
    from skcrf.segmentation import tags_to_words, words_to_tags

    train, test = read(args.data)
    X, Xt = ["".join(s) for s in train], ["".join(s) for s in test]
    pipe = make_pipeline(SequenceFeaturizer(dictionary={w for s in train for w in s}),
                         LinearChainCRF(n_jobs=args.n_jobs))
    t = time.perf_counter()
    pipe.fit(X, [words_to_tags(s) for s in train])
    out = {"fit_s": time.perf_counter() - t, "n_iter": pipe[-1].n_iter_,
           "n_features": pipe[0].n_features_out_}
    t = time.perf_counter()
    pred = [tags_to_words(x, p) for x, p in zip(Xt, pipe.predict(Xt))]
    out["chars_per_s"] = sum(map(len, Xt)) / (time.perf_counter() - t)
    out.update(score(train, test, pred))
    return out


def child_featurize(args):
    """fit_transform speed of the default CWS features (the whole training
    vocabulary as the dictionary, accessor variety, classes) on one thread:
    the first call in a process (loads or compiles the kernels) and warm calls."""
    from skcrf import SequenceFeaturizer

    train, _ = read(args.data)
    X = ["".join(s) for s in train]
    n = sum(map(len, X))
    words = sorted({w for s in train for w in s})

    def make():
        return SequenceFeaturizer(dictionary=words, accessor_variety=5,
                                  accessor_variety_folds=10, char_classes=True)

    t = time.perf_counter()
    make().fit_transform(X)
    first = time.perf_counter() - t
    warm = []
    for _ in range(3):
        t = time.perf_counter()
        make().fit_transform(X)
        warm.append(time.perf_counter() - t)
    return {"chars": n, "first_s": first, "warm_s": min(warm)}


def child_pkuseg(args):
    import spacy_pkuseg

    train, test = read(args.data)
    with tempfile.TemporaryDirectory() as d:
        tr, dummy, model = (os.path.join(d, n) for n in ("train.txt", "dev.txt", "model"))
        with open(tr, "w", encoding="utf-8") as fh:
            fh.write("\n".join("  ".join(s) for s in train) + "\n")
        with open(dummy, "w", encoding="utf-8") as fh:   # pkuseg scores this per epoch
            fh.write("  ".join(train[0]) + "\n")
        cwd = os.getcwd()
        os.chdir(d)                                    # it writes temporary files here
        try:
            t = time.perf_counter()
            spacy_pkuseg.train(tr, dummy, model)        # its defaults: 20 iterations
            fit_s = time.perf_counter() - t
            seg = spacy_pkuseg.pkuseg(model_name=model, user_dict=None)
            Xt = ["".join(s) for s in test]
            t = time.perf_counter()
            pred = [seg.cut(x) for x in Xt]
            cps = sum(map(len, Xt)) / (time.perf_counter() - t)
        finally:
            os.chdir(cwd)
    out = {"fit_s": fit_s, "n_iter": 20, "n_features": None, "chars_per_s": cps}
    out.update(score(train, test, pred))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "sighan2008_sxu"))
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    if args.child:
        if args.child == "featurize":
            out = child_featurize(args)
        elif args.child == "naive":
            out = child_naive(args)
        elif args.child == "pkuseg":
            out = child_pkuseg(args)
        else:
            out = child_skcrf(args.child, args)
        print(json.dumps(out))
        return
    names = args.only or list(ROWS) + ["naive", "pkuseg", "featurize"]
    print(f"# SIGHAN 2008 SXU word segmentation, train -> test — {date.today()} — "
          f"{machine()}, n_jobs={args.n_jobs}")
    print("| setting | word F1 | OOV recall | IV recall | P | R | fit s (incl. "
          "featurising) | L-BFGS iterations | segmenting chars/s |\n"
          "|---|---|---|---|---|---|---|---|---|",
          flush=True)
    for name in names:
        if name == "featurize":
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--data", args.data,
               "--n-jobs", str(args.n_jobs)]
        r = run_json_child(cmd)
        desc = {"naive": "SequenceFeaturizer(dictionary=<every training word>) + "
                         "LinearChainCRF()",
                "pkuseg": "spacy-pkuseg 1.0.2, its defaults (20 iterations, 1 thread)"
                }.get(name, ROWS.get(name, (name,))[0])
        print(f"| {desc} | {100 * r['f1']:.2f} | {100 * r['oov_recall']:.1f} | "
              f"{100 * r['iv_recall']:.1f} | {100 * r['precision']:.2f} | "
              f"{100 * r['recall']:.2f} | {r['fit_s']:.0f} | {r['n_iter']} | "
              f"{r['chars_per_s']:,.0f} |", flush=True)
    if "featurize" in names:
        for label, env in (("cold cache (compiles)", {"NUMBA_CACHE_DIR": tempfile.mkdtemp()}),
                           ("warm cache", {})):
            env["NUMBA_NUM_THREADS"] = "1"
            cmd = [sys.executable, os.path.abspath(__file__), "--child", "featurize",
                   "--data", args.data]
            r = run_json_child(cmd, extra_env=env)
            print(f"# fit_transform, default CWS features + whole training vocabulary as "
                  f"dictionary, 1 thread, {label}: first call {r['first_s']:.2f} s "
                  f"({r['chars'] / r['first_s'] / 1e6:.2f}M chars/s), warm "
                  f"{r['warm_s']:.2f} s ({r['chars'] / r['warm_s'] / 1e6:.2f}M chars/s)",
                  flush=True)


if __name__ == "__main__":
    main()
