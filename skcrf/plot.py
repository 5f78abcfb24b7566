"""Plots of fitted models, scikit-learn's Display pattern (needs matplotlib: ``skcrf[plot]``).

* :class:`TransitionWeightsDisplay`: heat map of the transition weights
  (with the start / end weights as an extra row / column);
* :class:`TrainingCurveDisplay`: objective per L-BFGS iteration and, with
  early stopping, the held-out score;
* :class:`LabelScoresDisplay`: precision / recall / F1 per label (per token,
  or per entity type under a tag scheme).

Each has ``from_estimator`` (and ``from_predictions`` where it applies),
and ``plot(ax=None)``, which sets ``ax_`` and ``figure_``. matplotlib is
imported only inside ``plot``.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import numpy as np
>>> from skcrf import LinearChainCRF
>>> from skcrf.plot import TransitionWeightsDisplay
>>> crf = LinearChainCRF(c2=0.01).fit([np.eye(2)[[0, 1, 1]]], [["a", "b", "b"]])
>>> disp = TransitionWeightsDisplay.from_estimator(crf)
>>> disp.labels, disp.weights.shape
(['a', 'b'], (2, 2))
"""

import numpy as np

__all__ = ["TransitionWeightsDisplay", "TrainingCurveDisplay", "LabelScoresDisplay"]


def _crf(estimator):
    """The LinearChainCRF inside a Pipeline or a skcrf.compat.CRF."""
    from sklearn.pipeline import Pipeline
    from sklearn.utils.validation import check_is_fitted

    if isinstance(estimator, Pipeline):
        estimator = estimator[-1]
    estimator = getattr(estimator, "crf_", estimator)
    check_is_fitted(estimator)
    return estimator


def _axes(ax, size=None):
    """``ax``, or the axes of a new figure of ``size`` inches (matplotlib's
    default when None) that lays itself out at every draw (matplotlib's
    tight layout, which a user's own ``tight_layout()`` call keeps): tick
    labels and axis labels are never cut off, whatever the number of labels."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=size, layout="tight")
    return ax


class TransitionWeightsDisplay:
    """Heat map of transition weights ``A[from, to]``.

    Parameters
    ----------
    weights : ndarray of shape (n_classes, n_classes)
    labels : list of str
    start, end : ndarray of shape (n_classes,), default=None
        Drawn as a ``<start>`` row and an ``<end>`` column when given.
        Forbidden transitions (-inf) are left blank.
    """

    def __init__(self, weights, labels, start=None, end=None):
        self.weights = np.asarray(weights, dtype=float)
        self.labels = [str(lab) for lab in labels]
        self.start = None if start is None else np.asarray(start, dtype=float)
        self.end = None if end is None else np.asarray(end, dtype=float)

    @classmethod
    def from_estimator(cls, estimator, *, boundaries=True, ax=None, **plot_kw):
        crf = _crf(estimator)
        show = boundaries and crf.start_end_transitions
        disp = cls(crf.transition_coef_, crf.classes_.tolist(),
                   crf.start_coef_ if show else None, crf.end_coef_ if show else None)
        return disp.plot(ax=ax, **plot_kw)

    def matrix(self):
        """The drawn matrix, rows ``from`` (+ ``<start>``), columns ``to`` (+ ``<end>``)."""
        L = len(self.labels)
        rows = L + (self.start is not None)
        cols = L + (self.end is not None)
        M = np.full((rows, cols), np.nan)
        M[:L, :L] = self.weights
        if self.start is not None:
            M[L, :L] = self.start
        if self.end is not None:
            M[:L, L] = self.end
        M[np.isneginf(M)] = np.nan
        return M

    def plot(self, ax=None, *, cmap="RdBu_r", include_values=None, values_format=".1f",
             colorbar=True):
        M = self.matrix()
        # a new figure grows with the matrix (~0.4 inch a cell), so that 20-60
        # labels keep readable ticks and values
        ax = _axes(ax, size=(max(6.4, 0.42 * M.shape[1] + 2.5),
                             max(4.8, 0.42 * M.shape[0] + 1.5)))
        lim = np.nanmax(np.abs(M)) if np.isfinite(M).any() else 1.0
        self.im_ = ax.imshow(np.ma.masked_invalid(M), cmap=cmap, vmin=-lim, vmax=lim)
        rows = self.labels + (["<start>"] if self.start is not None else [])
        cols = self.labels + (["<end>"] if self.end is not None else [])
        # many labels: vertical ticks (slanted ones would collide)
        ax.set_xticks(range(len(cols)), cols, rotation=45 if len(cols) <= 12 else 90,
                      ha="right" if len(cols) <= 12 else "center")
        ax.set_yticks(range(len(rows)), rows)
        ax.set_xlabel("to")
        ax.set_ylabel("from")
        if include_values is None:
            include_values = M.size <= 3600          # up to 60 labels
        if include_values:
            size = 8 if M.size <= 400 else 6
            for (i, j), v in np.ndenumerate(M):
                if np.isfinite(v):
                    ax.text(j, i, format(v, values_format), ha="center", va="center",
                            fontsize=size, color="white" if abs(v) > 0.6 * lim else "black")
        if colorbar:
            ax.figure.colorbar(self.im_, ax=ax)
        ax.set_title("Transition weights")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class TrainingCurveDisplay:
    """Objective per iteration, and the held-out score when early stopping ran.

    Parameters
    ----------
    objective : list of float
    validation_scores : list of float, default=None
    best_iteration : int, default=None
    """

    def __init__(self, objective, validation_scores=None, best_iteration=None):
        self.objective = list(objective)
        self.validation_scores = (None if validation_scores is None
                                  else list(validation_scores))
        self.best_iteration = best_iteration

    @classmethod
    def from_estimator(cls, estimator, *, ax=None, **plot_kw):
        crf = _crf(estimator)
        if not hasattr(crf, "loss_curve_"):
            raise ValueError(
                "this model has no training curve: a model read from a model file (skcrf "
                "train, skcrf.load_model) keeps its weights, not its history; plot a model "
                "fitted in Python, or pass the objective values to TrainingCurveDisplay.")
        disp = cls(crf.loss_curve_, getattr(crf, "validation_scores_", None),
                   getattr(crf, "best_iteration_", None))
        return disp.plot(ax=ax, **plot_kw)

    def plot(self, ax=None, *, logy=True):
        ax = _axes(ax)
        it = np.arange(1, len(self.objective) + 1)
        (self.line_,) = ax.plot(it, self.objective, color="C0", label="objective")
        if logy and self.objective and min(self.objective) > 0:
            ax.set_yscale("log")
        ax.set_xlabel("L-BFGS iteration")
        ax.set_ylabel("training objective", color="C0")
        self.score_line_ = self.ax2_ = None
        if self.validation_scores:
            self.ax2_ = ax.twinx()
            (self.score_line_,) = self.ax2_.plot(it[:len(self.validation_scores)],
                                                 self.validation_scores, color="C1",
                                                 label="held-out score")
            self.ax2_.set_ylabel("held-out score", color="C1")
        if self.best_iteration:
            ax.axvline(self.best_iteration, color="grey", linestyle=":",
                       label=f"kept: iteration {self.best_iteration}")
        ax.set_title("Training")
        self.ax_, self.figure_ = ax, ax.figure
        return self


class LabelScoresDisplay:
    """Precision, recall and F1 per label as grouped bars.

    Parameters
    ----------
    labels : list of str
    precision, recall, f1 : array-like of shape (n_labels,)
    support : array-like of shape (n_labels,)
    """

    def __init__(self, labels, precision, recall, f1, support):
        self.labels = [str(lab) for lab in labels]
        self.precision, self.recall, self.f1 = (np.asarray(v, dtype=float)
                                                for v in (precision, recall, f1))
        self.support = np.asarray(support)

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, scheme=None, ax=None, **plot_kw):
        """``scheme=None``: per token label; a tag scheme (``"BIO"``, ...): per
        entity type, exact spans (conlleval)."""
        if scheme is None:
            from sklearn.metrics import precision_recall_fscore_support

            from .metrics import _check_pairs

            _check_pairs(y_true, y_pred)
            flat_t = [v for s in y_true for v in s]
            flat_p = [v for s in y_pred for v in s]
            labels = sorted(set(flat_t) | set(flat_p), key=str)
            p, r, f, s = precision_recall_fscore_support(flat_t, flat_p, labels=labels,
                                                         zero_division=0)
        else:
            from .metrics import span_precision_recall_fscore

            per = span_precision_recall_fscore(y_true, y_pred, scheme, average=None)
            labels = [t or "(word)" for t in per]
            p, r, f, s = (np.array([v[k] for v in per.values()]) for k in range(4))
        return cls(labels, p, r, f, s).plot(ax=ax, **plot_kw)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, scheme=None, ax=None, **plot_kw):
        return cls.from_predictions(y, estimator.predict(X), scheme=scheme, ax=ax,
                                    **plot_kw)

    def plot(self, ax=None):
        ax = _axes(ax, size=(max(6.4, 0.55 * len(self.labels) + 2), 4.8))
        x = np.arange(len(self.labels))
        w = 0.27
        self.bars_ = [ax.bar(x + (k - 1) * w, vals, w, label=name)
                      for k, (name, vals) in enumerate((("precision", self.precision),
                                                        ("recall", self.recall),
                                                        ("F1", self.f1)))]
        ax.set_xticks(x, [f"{lab}\n({n})" for lab, n in zip(self.labels, self.support)],
                      fontsize=8)
        # the legend above the bars, outside the axes: it never covers a bar
        ax.set_ylim(0, 1.0)
        ax.set_ylabel("score")
        ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=3, frameon=False,
                  fontsize=8)
        ax.set_title("Scores per label (support)", pad=22)
        self.ax_, self.figure_ = ax, ax.figure
        return self
