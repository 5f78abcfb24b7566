"""Plots of a fitted model: transition weights, training curve, scores per label
=============================================================================

Trains a word segmenter on the bundled sample (no data needed), with early
stopping, and saves three PNGs.

::

    pip install -e ".[plot]"
    python examples/plots.py --out plots/
"""

import argparse
import os

import matplotlib

matplotlib.use("Agg")

from sklearn.pipeline import make_pipeline  # noqa: E402

from skcrf import LinearChainCRF, SequenceFeaturizer  # noqa: E402
from skcrf.datasets import load_sample_cws  # noqa: E402
from skcrf.metrics import make_span_f1_scorer  # noqa: E402
from skcrf.plot import LabelScoresDisplay, TrainingCurveDisplay, TransitionWeightsDisplay  # noqa: E402,E501
from skcrf.segmentation import words_to_tags  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="plots")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    sents = load_sample_cws()
    X = ["".join(s) for s in sents]
    y = [words_to_tags(s) for s in sents]
    train, test = slice(0, 900), slice(900, None)
    pipe = make_pipeline(
        SequenceFeaturizer(),
        LinearChainCRF(c2=0.3, constraints="BMES", early_stopping=True,
                       scoring=make_span_f1_scorer("BMES"), random_state=0))
    pipe.fit(X[train], y[train])
    crf = pipe[-1]
    print(f"{crf.n_iter_} iterations, kept iteration {crf.best_iteration_} "
          f"(held-out word F1 {max(crf.validation_scores_):.4f})")
    for name, disp in (
            ("transitions.png", TransitionWeightsDisplay.from_estimator(pipe)),
            ("training.png", TrainingCurveDisplay.from_estimator(pipe)),
            ("labels.png", LabelScoresDisplay.from_estimator(pipe, X[test], y[test]))):
        disp.figure_.tight_layout()
        disp.figure_.savefig(os.path.join(args.out, name), dpi=110)
        print("wrote", os.path.join(args.out, name))


if __name__ == "__main__":
    main()
