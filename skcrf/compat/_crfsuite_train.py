"""Training as CRFsuite does, with skcrf: what ``compat.CRF.fit`` and
``compat.pycrfsuite.Trainer.train`` share.

Items become attributes by python-crfsuite's rules (flat dicts straight
through skcrf's vectorizer, everything else through :mod:`._items`), the CRF
has CRFsuite's objective and options (no start / end weights, its L-BFGS
memory, period and stopping tests), labels keep CRFsuite's order (of first
appearance), the training log has CRFsuite's lines, and the result converts
to a CRFsuite model (:class:`~._crfsuite_model.CRFsuiteModel`).
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import precision_recall_fscore_support

from .._crf import LinearChainCRF
from ..feature_extraction._dict_vectorizer import SequenceDictVectorizer
from ._crfsuite_model import CRFsuiteModel
from ._items import item_attributes, needs_flattening

__all__ = ["CRFsuiteCRF", "fit_crfsuite", "to_crfsuite_model", "vectorize"]


class CRFsuiteCRF(LinearChainCRF):
    """LinearChainCRF with CRFsuite's optimiser options (memory, period,
    gradient test, minimum state-feature frequency) and no start / end weights."""

    def __init__(self, *, c1=0.0, c2=1.0, max_iter=100_000, tol=1e-5,
                 all_possible_states=False, all_possible_transitions=False,
                 start_end_transitions=False, n_jobs=None, verbose=0,
                 num_memories=6, period=10, epsilon=1e-5, min_freq=0.0):
        super().__init__(c1=c1, c2=c2, max_iter=max_iter, tol=tol,
                         all_possible_states=all_possible_states,
                         all_possible_transitions=all_possible_transitions,
                         start_end_transitions=start_end_transitions, n_jobs=n_jobs,
                         verbose=verbose)
        self.num_memories = num_memories
        self.period = period
        self.epsilon = epsilon
        self.min_freq = min_freq

    def _optimizer_options(self):
        return dict(m=int(self.num_memories), period=int(self.period),
                    epsilon=float(self.epsilon), min_state_count=float(self.min_freq))


def vectorize(vectorize_fn, X):
    """``vectorize_fn(X)``, with the items turned into attributes under
    python-crfsuite's rules first when the vectorizer cannot read them as
    they are (bytes, nested dicts, lists of attribute names): the common
    case, flat dicts, pays nothing for the rules."""
    try:
        return vectorize_fn(X)
    except TypeError:
        if isinstance(X, (str, bytes, dict)) or not hasattr(X, "__iter__"):
            raise
        X = [[item if not needs_flattening(item) else item_attributes(item)
              for item in _items(seq)] for seq in X]
        return vectorize_fn(X)


def _items(seq):
    return seq._items if hasattr(seq, "_items") else seq


def label_order(y):
    """Labels in order of first appearance (CRFsuite's label ids)."""
    seen = {}
    for seq in y:
        for lab in seq:
            if lab not in seen:
                seen[lab] = len(seen)
    return list(seen)


def fit_crfsuite(X, y, held_out=None, log=None, **options):
    """``(vectorizer, crf, labels)``: a CRF fitted on items ``X`` and labels
    ``y`` as CRFsuite fits one (``options``: :class:`CRFsuiteCRF`'s), with
    CRFsuite's log lines passed to ``log`` (held-out scores after every
    iteration when ``held_out = (X_dev, y_dev)``)."""
    vectorizer = SequenceDictVectorizer(separator=":")
    Xs = vectorize(vectorizer.fit_transform, X)
    y = [list(seq) for seq in y]
    labels = label_order(y)
    crf = CRFsuiteCRF(**options)
    crf._validate_params()
    callback = scoring = held = None
    if log is not None:
        log("Feature generation\n")
        log(f"Number of features: {vectorizer.n_features_out_}\n")
        log("Seconds required: 0.000\n\n")
        scoring = _HeldOutReport(labels) if held_out is not None else None
        callback = _Logger(log, scoring)
    if held_out is not None:
        held = (vectorize(vectorizer.transform, held_out[0]), [list(s) for s in held_out[1]])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # CRFsuite stops at max_iterations without a warning, and code written
        # for it (a randomized search of 50 fits) expects silence
        warnings.simplefilter("ignore", ConvergenceWarning)
        if held is not None:
            crf._fit(Xs, y, held_out=held, scoring=scoring, callback=callback)
        else:
            crf._fit(Xs, y, callback=callback)
    if log is not None:
        log(f"Total seconds required for training: {time.perf_counter() - t0:.3f}\n\n")
        log("Storing the model\n")
        log("Seconds required: 0.000\n\n")
    return vectorizer, crf, labels


def to_crfsuite_model(vectorizer, crf, labels):
    """The CRFsuite model of a fitted vectorizer and CRF (labels in ``labels``'
    order; attributes named as the vectorizer names its columns)."""
    if crf.start_coef_.any() or crf.end_coef_.any():
        raise ValueError("CRFsuite models have no start / end weights: fit with "
                         "start_end_transitions=False to write one.")
    names = [str(n) for n in vectorizer.get_feature_names_out()]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"two features are both named {dup!r} (a str value and a number "
                         "under the same name?): a CRFsuite model cannot keep them apart.")
    order = [int(np.flatnonzero(crf.classes_ == lab)[0]) for lab in labels]
    W = np.ascontiguousarray(crf.coef_.T)[:, order]
    A = crf.transition_coef_[np.ix_(order, order)]
    if not np.isfinite(A).all():
        raise ValueError("CRFsuite models have no forbidden transitions (-inf): fit "
                         "without constraints to write one.")
    return CRFsuiteModel([str(lab) for lab in labels], names, W, A)


class _HeldOutReport:
    """A scorer that keeps CRFsuite's per-label held-out report of the last
    call and returns the macro-average F1."""

    def __init__(self, labels):
        self.labels = labels
        self.lines = []

    def __call__(self, estimator, X, y):
        pred = estimator.predict(X)
        flat_y = [lab for seq in y for lab in seq]
        flat_p = [lab for seq in pred for lab in seq]
        p, r, f, _ = precision_recall_fscore_support(
            flat_y, flat_p, labels=self.labels, zero_division=0)
        lines = ["Performance by label (#match, #model, #ref) (precision, recall, F1):\n"]
        for k, lab in enumerate(self.labels):
            match = sum(a == b == lab for a, b in zip(flat_y, flat_p))
            model, ref = flat_p.count(lab), flat_y.count(lab)
            if model == ref == 0:
                lines.append(f"    {lab}: (0, 0, 0) (******, ******, ******)\n")
            else:
                lines.append(f"    {lab}: ({match}, {model}, {ref}) ({p[k]:.4f}, "
                             f"{r[k]:.4f}, {f[k]:.4f})\n")
        macro = (float(np.mean(p)), float(np.mean(r)), float(np.mean(f)))
        lines.append("Macro-average precision, recall, F1: "
                     f"({macro[0]:.6f}, {macro[1]:.6f}, {macro[2]:.6f})\n")
        n_ok = sum(a == b for a, b in zip(flat_y, flat_p))
        lines.append(f"Item accuracy: {n_ok} / {len(flat_y)} "
                     f"({n_ok / max(len(flat_y), 1):.4f})\n")
        n_seq = sum(list(a) == list(b) for a, b in zip(y, pred))
        lines.append(f"Instance accuracy: {n_seq} / {len(y)} ({n_seq / max(len(y), 1):.4f})\n")
        self.lines = lines
        return macro[2]


class _Logger:
    """CRFsuite's lines for every L-BFGS iteration."""

    def __init__(self, log, report):
        self.log, self.report, self.last = log, report, 0.0

    def __call__(self, record, theta):
        r = record.as_dict()
        log = self.log
        log(f"***** Iteration #{r['iteration']} *****\n")
        log(f"Loss: {r['objective']:.6f}\n")
        log(f"Feature norm: {r['x_norm']:.6f}\n")
        log(f"Error norm: {r['grad_norm']:.6f}\n")
        log(f"Active features: {r['n_active']}\n")
        log(f"Line search trials: {r['n_evals']}\n")
        log(f"Line search step: {r['step']:.6f}\n")
        log(f"Seconds required for this iteration: {r['seconds'] - self.last:.3f}\n")
        self.last = r["seconds"]
        if self.report is not None:
            for line in self.report.lines:
                log(line)
        log("\n")
