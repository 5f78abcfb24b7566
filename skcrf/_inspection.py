"""Reading a fitted CRF's weights: the strongest features, the transition table.

Pure functions of the fitted arrays, shared by :class:`~skcrf.LinearChainCRF`
and the sklearn-crfsuite compatibility layer. NumPy only.
"""

from numbers import Integral

import numpy as np

__all__ = ["top_state_features", "transition_table"]


def top_state_features(classes, coef, feature_names=None, k=10, negative=False):
    """``label -> [(feature_name, weight), ...]``: the ``k`` strongest (most
    positive, or most negative) state weights of each label; ``coef`` is
    (n_classes, n_features)."""
    if k is not None and (isinstance(k, (bool, np.bool_))
                          or not isinstance(k, (Integral, np.integer)) or k < 1):
        raise ValueError(f"k must be a positive int or None, got {k!r}.")
    if feature_names is None:
        feature_names = np.arange(coef.shape[1])
    feature_names = np.asarray(feature_names)
    if feature_names.shape != (coef.shape[1],):
        raise ValueError(
            f"feature_names has shape {feature_names.shape}; expected "
            f"({coef.shape[1]},)."
        )
    out = {}
    for lab, w in zip(classes.tolist(), coef):
        order = np.argsort(w if negative else -w, kind="stable")
        order = order[(w[order] < 0) if negative else (w[order] > 0)][:k]
        out[lab] = [(feature_names[i].item() if hasattr(feature_names[i], "item")
                     else feature_names[i], float(w[i])) for i in order]
    return out


def transition_table(classes, A, start, end):
    """``{from_label: {to_label: weight}}`` with ``"<start>"`` / ``"<end>"``."""
    labels = classes.tolist()
    table = {a: {b: float(A[i, j]) for j, b in enumerate(labels)}
             for i, a in enumerate(labels)}
    table["<start>"] = {b: float(w) for b, w in zip(labels, start)}
    for a, w in zip(labels, end):
        table[a]["<end>"] = float(w)
    return table
