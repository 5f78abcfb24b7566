"""Tuning ``WordSegmenter``'s ``oov_threshold`` on a split of the SXU *training* data.

One ``WordSegmenter`` (all other defaults) is fitted on the first 90 % of the
training sentences; the threshold only acts in ``predict``, so every value is
scored on the held-out 10 % from that one fit. Threshold 0 is the main model
alone (no main-model word start is below 0). The SXU test set is not read.

    python benchmarks/tuning/cws_oov_tuning.py --data ../shared/data/sighan2008_sxu [--unlabeled]
"""

import argparse
import os
import sys
import time
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, machine

from skcrf import WordSegmenter
from skcrf.metrics import segmentation_scores
from skcrf.segmentation import read_segmented

THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "sighan2008_sxu"))
    ap.add_argument("--dev-fraction", type=float, default=0.1)
    ap.add_argument("--unlabeled", action="store_true",
                    help="give the dev text as unlabeled text (the closed track's setting)")
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args()
    sents = read_segmented(os.path.join(args.data, "train.txt"))
    n_dev = int(len(sents) * args.dev_fraction)
    train, dev = sents[:-n_dev], sents[-n_dev:]
    Xd = ["".join(s) for s in dev]
    kw = {"unlabeled_text": Xd} if args.unlabeled else {}
    t = time.perf_counter()
    seg = WordSegmenter(n_jobs=args.n_jobs, **kw).fit(["".join(s) for s in train], train)
    fit_s = time.perf_counter() - t
    print(f"# SXU tuning split ({len(train)} train / {len(dev)} dev sentences), "
          f"WordSegmenter({'unlabeled_text=<dev text>' if args.unlabeled else ''}) "
          f"— {date.today()} — {machine()}, n_jobs={args.n_jobs}, fit {fit_s:.0f} s "
          f"(main model {seg.crf_.n_iter_} iterations, OOV model {seg.oov_crf_.n_iter_})")
    print("| oov_threshold | dev word F1 | OOV recall | IV recall | predict s |\n"
          "|---|---|---|---|---|", flush=True)
    for thr in THRESHOLDS:
        seg.set_params(oov_threshold=thr)
        t = time.perf_counter()
        pred = seg.predict(Xd)
        pred_s = time.perf_counter() - t
        sc = segmentation_scores(dev, pred, train_words=seg.train_words_)
        print(f"| {thr} | {sc['f1']:.4f} | {sc['oov_recall']:.4f} | {sc['iv_recall']:.4f} | "
              f"{pred_s:.1f} |", flush=True)


if __name__ == "__main__":
    main()
