"""A second corpus for WordSegmenter's defaults: UD Chinese GSD, train -> dev.

The defaults are tuned on a split of SXU's training data (``cws_tuning.py``);
this checks, on a corpus of another segmentation standard (and domain:
Wikipedia), that a choice made there does not hurt elsewhere. It compares
the defaults with one parameter changed (``--vary name=value``, several
allowed), on GSD's dev set only (its test set is not read).

    python benchmarks/tuning/cws_gsd_check.py --data ../shared/data/ud_chinese_gsd \\
        --vary dictionary_folds=10 --vary dictionary_folds=2
"""

import argparse
import ast
import os
import sys
import time
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, machine

from skcrf import WordSegmenter
from skcrf.datasets import read_conllu
from skcrf.metrics import segmentation_scores


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "ud_chinese_gsd"))
    ap.add_argument("--vary", action="append", default=[])
    ap.add_argument("--unlabeled", action="store_true",
                    help="give the dev text as unlabeled text")
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args()
    train = read_conllu(os.path.join(args.data, "train.conllu"))
    dev = read_conllu(os.path.join(args.data, "dev.conllu"))
    X, Xd = ["".join(s) for s in train], ["".join(s) for s in dev]
    print(f"# UD Chinese GSD, train ({len(train)} sentences) -> dev ({len(dev)}) — "
          f"{date.today()} — {machine()}, n_jobs={args.n_jobs}"
          f"{', dev text as unlabeled text' if args.unlabeled else ''}")
    print("| WordSegmenter(...) | word F1 | OOV recall | IV recall | fit s |\n"
          "|---|---|---|---|---|",
          flush=True)
    for spec in args.vary or ["defaults"]:
        kw = {}
        if spec != "defaults":
            k, v = spec.split("=", 1)
            kw[k] = ast.literal_eval(v)
        if args.unlabeled:
            kw["unlabeled_text"] = Xd
        t = time.perf_counter()
        seg = WordSegmenter(n_jobs=args.n_jobs, **kw).fit(X, train)
        fit_s = time.perf_counter() - t
        sc = segmentation_scores(dev, seg.predict(Xd), train_words=seg.train_words_)
        print(f"| {spec} | {100 * sc['f1']:.2f} | {100 * sc['oov_recall']:.1f} | "
              f"{100 * sc['iv_recall']:.1f} | {fit_s:.0f} |", flush=True)


if __name__ == "__main__":
    main()
