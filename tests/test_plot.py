"""Displays (matplotlib, headless): what they draw equals the model's numbers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.metrics import precision_recall_fscore_support  # noqa: E402

from skcrf import LinearChainCRF  # noqa: E402
from skcrf.metrics import span_precision_recall_fscore  # noqa: E402
from skcrf.plot import LabelScoresDisplay, TrainingCurveDisplay, TransitionWeightsDisplay  # noqa: E402,E501


@pytest.fixture(scope="module")
def bio():
    rng = np.random.default_rng(0)
    X, y = [], []
    for _ in range(120):
        tags = []
        while len(tags) < 6:
            tags += ["B-PER", "I-PER"] if rng.random() < 0.3 else ["O"]
        tags = tags[:6]
        code = {"O": 0, "B-PER": 1, "I-PER": 2}
        X.append(np.eye(3)[[code[t] for t in tags]] + rng.normal(scale=0.8, size=(len(tags), 3)))
        y.append(tags)
    crf = LinearChainCRF(constraints="BIO", c2=0.1, early_stopping=True, random_state=0,
                         n_iter_no_change=3).fit(X, y)
    return crf, X, y


def test_transition_heat_map_shows_the_weights(bio, tmp_path):
    crf, _, _ = bio
    disp = TransitionWeightsDisplay.from_estimator(crf)
    M = disp.im_.get_array()
    L = crf.classes_.size
    A = crf.transition_coef_
    np.testing.assert_array_equal(M.mask[:L, :L], np.isneginf(A))
    np.testing.assert_allclose(M[:L, :L][~np.isneginf(A)], A[~np.isneginf(A)])
    np.testing.assert_allclose(M[L, :L].filled(np.nan), np.where(
        np.isneginf(crf.start_coef_), np.nan, crf.start_coef_))
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == crf.classes_.tolist() + [
        "<start>"]
    disp.figure_.savefig(tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 1000
    plt.close("all")


def test_training_curve_has_objective_held_out_score_and_kept_iteration(bio):
    crf, _, _ = bio
    disp = TrainingCurveDisplay.from_estimator(crf)
    np.testing.assert_allclose(disp.line_.get_ydata(), crf.loss_curve_)
    np.testing.assert_allclose(disp.score_line_.get_ydata(), crf.validation_scores_)
    assert any(line.get_xdata()[0] == crf.best_iteration_ for line in disp.ax_.lines[1:])
    plt.close("all")


def test_label_scores_equal_the_metrics(bio):
    crf, X, y = bio
    pred = crf.predict(X)
    disp = LabelScoresDisplay.from_predictions(y, pred)
    flat_t = [v for s in y for v in s]
    flat_p = [v for s in pred for v in s]
    p, r, f, s = precision_recall_fscore_support(flat_t, flat_p, labels=disp.labels)
    np.testing.assert_allclose([b.get_height() for b in disp.bars_[2]], f)
    np.testing.assert_allclose(disp.precision, p)
    spans = LabelScoresDisplay.from_estimator(crf, X, y, scheme="BIO")
    per = span_precision_recall_fscore(y, pred, "BIO", average=None)
    assert spans.labels == ["PER"]
    np.testing.assert_allclose(spans.f1, [per["PER"][2]])
    plt.close("all")


def _overlaps(texts, renderer):
    boxes = [t.get_window_extent(renderer) for t in texts if t.get_text()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_heat_map_of_22_labels_is_readable():
    # a new figure grows with the labels: no overlapping tick labels, every
    # value written, nothing cut off at the figure's edges
    rng = np.random.default_rng(1)
    labels = [f"B-CHUNK{i}" for i in range(22)]
    disp = TransitionWeightsDisplay(rng.normal(size=(22, 22)), labels, rng.normal(size=22),
                                    rng.normal(size=22)).plot()
    fig = disp.figure_
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert not _overlaps(disp.ax_.get_xticklabels(), renderer)
    assert not _overlaps(disp.ax_.get_yticklabels(), renderer)
    assert len(disp.ax_.texts) == 23 * 23 - 1           # all but start -> end
    fig_box = fig.bbox
    for label in (disp.ax_.xaxis.label, disp.ax_.yaxis.label):
        box = label.get_window_extent(renderer)
        assert fig_box.x0 <= box.x0 and box.x1 <= fig_box.x1
        assert fig_box.y0 <= box.y0 and box.y1 <= fig_box.y1
    plt.close("all")


def test_label_scores_legend_covers_no_bar(bio):
    crf, X, y = bio
    disp = LabelScoresDisplay.from_predictions(y, crf.predict(X))
    fig = disp.figure_
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = disp.ax_.get_legend().get_window_extent(renderer)
    for bars in disp.bars_:
        for bar in bars:
            assert not legend.overlaps(bar.get_window_extent(renderer))
    plt.close("all")


def test_training_curve_of_a_model_without_history_is_a_clear_error(tmp_path):
    from sklearn.pipeline import make_pipeline

    import skcrf
    from skcrf import SequenceFeaturizer

    X, y = ["上海浦东", "开发"], [["B", "E", "B", "E"], ["B", "E"]]
    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(max_iter=3)).fit(X, y)
    loaded = skcrf.load_model(skcrf.save_model(pipe, tmp_path / "m.skcrf"))
    with pytest.raises(ValueError, match="no training curve"):
        TrainingCurveDisplay.from_estimator(loaded)


def test_users_tight_layout_call_still_works(bio):
    # example code written for matplotlib calls tight_layout() on the figure
    crf, _, _ = bio
    disp = TransitionWeightsDisplay.from_estimator(crf)
    disp.figure_.tight_layout()
    disp.figure_.canvas.draw()
    plt.close("all")
