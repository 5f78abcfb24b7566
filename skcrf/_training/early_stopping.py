"""Early stopping: score held-out sequences after every L-BFGS iteration.

:func:`split_validation` sets aside a fraction of the training sequences;
:class:`HeldOutMonitor` is the ``monitor`` of :func:`skcrf._training.optimize.minimize_lbfgs`:
it decodes the held-out sequences with the current weights (the pure
functions of :mod:`skcrf._inference`), records the score, remembers the best
weights, and asks to stop after ``n_iter_no_change`` iterations without
improvement.
"""

import math

import numpy as np
from sklearn.utils import check_random_state

from .. import _inference as inference
from .._arrays import Weights

__all__ = ["split_validation", "HeldOutMonitor", "check_scoring"]


def split_validation(n_sequences, fraction, random_state):
    """Indices ``(train, validation)``: a random ``fraction`` of the sequences
    (at least one) held out, at least one left for training."""
    n_val = math.ceil(fraction * n_sequences)
    if n_val < 1 or n_sequences - n_val < 1:
        raise ValueError(
            f"validation_fraction={fraction} of {n_sequences} sequence(s) leaves "
            f"{n_sequences - n_val} for training and {n_val} held out; early stopping "
            "needs at least one of each."
        )
    perm = check_random_state(random_state).permutation(n_sequences)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def _token_accuracy(y_true, y_pred, offsets):
    return float(np.mean(y_true == y_pred)) if y_true.size else 0.0


def _sequence_accuracy(y_true, y_pred, offsets):
    lengths = np.diff(offsets)
    if lengths.size == 0:
        return 0.0
    wrong = np.zeros(lengths.size, dtype=np.int64)
    seq = np.repeat(np.arange(lengths.size), lengths)
    np.add.at(wrong, seq, y_true != y_pred)
    return float(np.mean(wrong == 0))


_BUILTIN = {"token_accuracy": _token_accuracy, "sequence_accuracy": _sequence_accuracy}


def check_scoring(scoring):
    """``None`` (token accuracy), a built-in name, or a scorer ``(estimator, X, y)``."""
    if scoring is None:
        return _token_accuracy
    if isinstance(scoring, str):
        if scoring not in _BUILTIN:
            raise ValueError(f"scoring={scoring!r}: expected one of {sorted(_BUILTIN)}, "
                             "None, or a scorer callable(estimator, X, y) such as "
                             "skcrf.metrics.make_span_f1_scorer('BIO').")
        return _BUILTIN[scoring]
    if not callable(scoring):
        raise ValueError(f"scoring={scoring!r} is neither a name nor a callable.")
    return scoring


class HeldOutMonitor:
    """Scores held-out sequences after each iteration and keeps the best weights.

    Parameters
    ----------
    snapshot : LinearChainCRF
        An estimator to hold the current weights when ``scoring`` is a scorer
        callable (it is given ``coef_`` etc. before each call).
    X_val : Sequences
    y_val : ndarray
        The held-out labels, flat.
    classes : ndarray
    layout : ParameterLayout
    scoring : None, str or callable
    n_iter_no_change : int
    n_threads : int
    """

    def __init__(self, snapshot, X_val, y_val, classes, layout, scoring,
                 n_iter_no_change, n_threads):
        self.snapshot = snapshot
        self.X_val = X_val
        self.arrays = X_val.kernel_arrays()
        self.y_val = y_val
        self.classes = classes
        self.layout = layout
        self.score_fn = check_scoring(scoring)
        self.builtin = scoring is None or isinstance(scoring, str)
        self.n_iter_no_change = int(n_iter_no_change)
        self.n_threads = n_threads
        self.scores = []
        self.best_score = -np.inf
        self.best_theta = None
        self.best_iteration = 0
        self.best_objective = None
        self._since_best = 0

    def score(self, theta):
        W, A, start, end = self.layout.unpack(theta)
        if self.builtin:
            weights = Weights.from_arrays(W, A, start, end)
            pred, _ = inference.viterbi(self.arrays, weights, self.n_threads)
            return self.score_fn(self.y_val, self.classes[pred], self.arrays.offsets)
        est = self.snapshot
        est.classes_, est.n_features_in_ = self.classes, self.layout.n_features
        est.coef_, est.transition_coef_, est.start_coef_, est.end_coef_ = W.T, A, start, end
        offsets = self.arrays.offsets
        y = [self.y_val[offsets[i]:offsets[i + 1]].tolist() for i in range(offsets.size - 1)]
        return float(self.score_fn(est, self.X_val, y))

    def __call__(self, record, theta):
        s = self.score(theta)
        self.scores.append(s)
        record.extra["held_out"] = s
        if s > self.best_score:
            self.best_score, self.best_theta = s, np.array(theta, copy=True)
            self.best_iteration, self.best_objective = record.iteration, record.objective
            self._since_best = 0
        else:
            self._since_best += 1
        return self._since_best >= self.n_iter_no_change
