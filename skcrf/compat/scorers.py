"""sklearn-crfsuite's ``scorers`` module: scorers for ``scoring=``."""

from sklearn.metrics import make_scorer

from ..compat import metrics

__all__ = ["flat_accuracy", "sequence_accuracy"]

#: token accuracy of ``estimator.predict(X)``
flat_accuracy = make_scorer(metrics.flat_accuracy_score)
#: fraction of sequences labelled entirely right
sequence_accuracy = make_scorer(metrics.sequence_accuracy_score)
