"""sklearn-crfsuite's ``metrics`` module: token-level ("flat") metrics of label sequences.

Each ``flat_*`` function flattens ``y_true`` and ``y_pred`` (lists of label
sequences, which must have equal lengths) and calls the scikit-learn metric
of the same name with the remaining arguments, e.g.
``flat_f1_score(y_test, y_pred, average="weighted", labels=labels)``.
For entity-level (exact span) F1, use :mod:`skcrf.metrics`.
"""

from functools import wraps

from sklearn import metrics as _metrics

from ..metrics import _check_pairs

__all__ = ["flat_accuracy_score", "flat_precision_score", "flat_recall_score",
           "flat_f1_score", "flat_fbeta_score", "flat_classification_report",
           "sequence_accuracy_score"]


def _flatten(y):
    return [label for seq in y for label in seq]


def _flattens_y(func):
    @wraps(func)
    def wrapper(y_true, y_pred, *args, **kwargs):
        _check_pairs(y_true, y_pred)
        return func(_flatten(y_true), _flatten(y_pred), *args, **kwargs)

    return wrapper


@_flattens_y
def flat_accuracy_score(y_true, y_pred):
    """Accuracy over all tokens."""
    return _metrics.accuracy_score(y_true, y_pred)


@_flattens_y
def flat_precision_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.precision_score`` over all tokens."""
    return _metrics.precision_score(y_true, y_pred, **kwargs)


@_flattens_y
def flat_recall_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.recall_score`` over all tokens."""
    return _metrics.recall_score(y_true, y_pred, **kwargs)


@_flattens_y
def flat_f1_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.f1_score`` over all tokens."""
    return _metrics.f1_score(y_true, y_pred, **kwargs)


@_flattens_y
def flat_fbeta_score(y_true, y_pred, beta, **kwargs):
    """``sklearn.metrics.fbeta_score`` over all tokens."""
    return _metrics.fbeta_score(y_true, y_pred, beta=beta, **kwargs)


@_flattens_y
def flat_classification_report(y_true, y_pred, labels=None, **kwargs):
    """``sklearn.metrics.classification_report`` over all tokens."""
    return _metrics.classification_report(y_true, y_pred, labels=labels, **kwargs)


def sequence_accuracy_score(y_true, y_pred):
    """Fraction of sequences labelled entirely right, as sklearn-crfsuite computes it.

    Sequences are compared whole: a predicted sequence of another length is
    simply wrong (it is not an error, unlike in the ``flat_*`` metrics), and
    no sequences at all score 0.  ``y_true`` and ``y_pred`` must hold the
    same number of sequences.
    """
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(
            f"y_true has {len(y_true)} sequences but y_pred has {len(y_pred)}")
    if not y_true:
        return 0
    right = sum(list(a) == list(b) for a, b in zip(y_true, y_pred))
    return right / len(y_true)
