"""LinearChainCRF: the estimator."""

from contextlib import contextmanager
from numbers import Integral, Real

import numba
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _kernels as K
from ._objective import (
    CRFObjective,
    ParameterLayout,
    chunk_bounds,
    minimize_lbfgs,
    resolve_n_threads,
    transform_exp,
)
from ._constraints import constraint_masks
from ._persistence import VersionedPickleMixin
from ._sklearn_compat import Interval, StrOptions, _fit_context
from ._validation import check_labels, check_sample_weight, check_sequences

__all__ = ["LinearChainCRF"]


def _check_against_constraints(y_idx, offsets, classes, trans_ok, start_ok, end_ok):
    """Refuse training labels that contain a transition the constraints forbid."""
    lengths = np.diff(offsets)
    first = np.zeros(y_idx.size, dtype=bool)
    first[offsets[:-1][lengths > 0]] = True
    last = np.zeros(y_idx.size, dtype=bool)
    last[offsets[1:][lengths > 0] - 1] = True
    bad = np.zeros(y_idx.size, dtype=bool)
    if y_idx.size > 1:
        bad[1:] = ~first[1:] & ~trans_ok[y_idx[:-1], y_idx[1:]]
    bad |= first & ~start_ok[y_idx]
    bad |= last & ~end_ok[y_idx]
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        s = int(np.searchsorted(offsets, k, side="right") - 1)
        t = k - offsets[s]
        names = classes.tolist()
        lab = names[y_idx[k]]
        if first[k] and not start_ok[y_idx[k]]:
            what = f"a sequence may not start with {lab!r}"
        elif not first[k] and not trans_ok[y_idx[k - 1], y_idx[k]]:
            what = f"{names[y_idx[k - 1]]!r} -> {lab!r} is not allowed"
        else:
            what = f"a sequence may not end with {lab!r}"
        hint = (" (skcrf.repair_tags reads invalid BIO tags as conlleval does)"
                 if "I-" in str(lab) else "")
        raise ValueError(f"y[{s}] position {t}: {what} by the constraints.{hint}")


@contextmanager
def _numba_threads(n):
    """Let Numba's parallel kernels use ``n`` threads inside the block."""
    if n <= 1:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(old)


class LinearChainCRF(VersionedPickleMixin, BaseEstimator):
    r"""Linear-chain conditional random field trained by L2-penalised likelihood.

    The model scores a label sequence :math:`y` for token features
    :math:`x_1 \dots x_T` as

    .. math::

        s(x, y) = \sum_t x_t^\top W_{:, y_t} + \sum_{t>1} A_{y_{t-1}, y_t}
                  + b_{y_1} + e_{y_T}

    with :math:`p(y \mid x) = \exp s(x, y) / Z(x)`. Training minimises
    :math:`-\sum_i w_i \log p(y_i \mid x_i) + c_2 \lVert\theta\rVert^2` (the
    objective of CRFsuite with ``c1=0``) with scipy's L-BFGS-B; the kernels
    (forward-backward, gradient, Viterbi) are Numba functions that run in
    parallel over sequences.

    Parameters
    ----------
    c2 : float, default=1.0
        Coefficient of the squared L2 norm of all weights. The same value as
        CRFsuite's ``c2`` gives the same optimum.
    max_iter : int, default=1000
        Maximum number of L-BFGS iterations. A ``ConvergenceWarning`` is
        emitted when it is reached.
    tol : float, default=1e-5
        Stopping rule (CRFsuite's): stop when the objective improved by less
        than ``tol`` relative over the last 10 iterations. Training also stops
        when L-BFGS-B cannot decrease the objective any further.
    all_possible_states : bool, default=False
        If False, a state weight exists only for (feature, label) pairs that
        occur in the training data (as in CRFsuite); the others are fixed at 0.
    all_possible_transitions : bool, default=True
        If False, only label transitions seen in training get a weight.
    start_end_transitions : bool, default=True
        Learn weights for the first and the last label of a sequence.
    n_jobs : int, default=None
        Threads for the kernels. ``None`` means 1, ``-1`` all cores. Inside a
        parallel ``GridSearchCV`` keep it at ``None``: the search's processes
        already use the cores.
    warm_start : bool, default=False
        Start from the weights of the previous ``fit`` (same classes and
        number of features required).
    verbose : int, default=0
        If > 0, print one line per L-BFGS iteration: iteration, objective,
        gradient norm and elapsed seconds.
    constraints : {"BIO", "BIOES", "BIOUL", "BMES"} or list of (str, str), default=None
        Allowed label transitions. A forbidden transition gets weight -inf in
        training (the partition function) and in decoding, so the model is a
        distribution over valid sequences only. A scheme name allows what the
        scheme allows (e.g. no ``O -> I-PER``, no start -> ``I-*``); a list
        gives the allowed ``(from, to)`` pairs, where ``"<start>"`` /
        ``"<end>"`` stand for the sequence boundaries (boundaries are free
        unless such pairs are listed). See :func:`skcrf.allowed_transitions`.
    decoding : {"viterbi", "marginal"}, default="viterbi"
        ``predict``: the most probable whole sequence (Viterbi), or each
        token's most probable label under the (constrained) marginals, which
        maximises the expected number of correct tokens.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labels, sorted.
    coef_ : ndarray of shape (n_classes, n_features)
        State weights; exactly 0 where no weight exists.
    transition_coef_ : ndarray of shape (n_classes, n_classes)
        Transition weights, indexed ``[from, to]``.
    start_coef_, end_coef_ : ndarray of shape (n_classes,)
        Weights of the first / last label (zeros when disabled).
    n_features_in_ : int
    n_iter_ : int
        L-BFGS iterations run.
    objective_ : float
        Final value of the training objective.
    loss_curve_ : list of float
        Objective after each iteration.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrf import LinearChainCRF
    >>> X = [np.eye(2)[[0, 1, 1]], np.eye(2)[[1, 0]]]
    >>> y = [["a", "b", "b"], ["b", "a"]]
    >>> crf = LinearChainCRF(c2=0.01).fit(X, y)
    >>> crf.predict([np.eye(2)[[1, 1, 0]]])
    [['b', 'b', 'a']]
    """

    _parameter_constraints = {
        "c2": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "all_possible_states": ["boolean"],
        "all_possible_transitions": ["boolean"],
        "start_end_transitions": ["boolean"],
        "n_jobs": [Integral, None],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "constraints": [None, StrOptions({"BIO", "IOB2", "BIOES", "IOBES", "BIOUL",
                                          "BILOU", "BMES"}), list, tuple, set, frozenset],
        "decoding": [StrOptions({"viterbi", "marginal"})],
    }

    def __init__(
        self,
        *,
        c2=1.0,
        max_iter=1000,
        tol=1e-5,
        all_possible_states=False,
        all_possible_transitions=True,
        start_end_transitions=True,
        n_jobs=None,
        warm_start=False,
        verbose=0,
        constraints=None,
        decoding="viterbi",
    ):
        self.c2 = c2
        self.max_iter = max_iter
        self.tol = tol
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.start_end_transitions = start_end_transitions
        self.n_jobs = n_jobs
        self.warm_start = warm_start
        self.verbose = verbose
        self.constraints = constraints
        self.decoding = decoding

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the CRF.

        Parameters
        ----------
        X : Sequences or list of array-like / sparse matrix
            One ``(length, n_features)`` matrix per sequence.
        y : list of list of labels, shape (n_sequences,)
            One label (str or int) per token.
        sample_weight : array-like of shape (n_sequences,), default=None
            Weight of each sequence in the likelihood.

        Returns
        -------
        self
        """
        seqs = check_sequences(X)
        if len(seqs) == 0:
            raise ValueError("X is empty: need at least one sequence to fit.")
        if seqs.n_tokens == 0:
            raise ValueError("Every training sequence is empty: nothing to learn from.")
        flat = check_labels(y, seqs.lengths)
        weights = check_sample_weight(sample_weight, len(seqs))
        classes, y_idx = np.unique(flat, return_inverse=True)
        y_idx = y_idx.astype(np.int32).reshape(-1)
        L, F = classes.size, seqs.n_features
        n_threads = resolve_n_threads(self.n_jobs)

        masks = constraint_masks(self.constraints, classes)
        if masks is not None:
            _check_against_constraints(y_idx, seqs.offsets, classes, *masks)
        layout = self._make_layout(seqs, y_idx, L, weights, masks)
        objective = CRFObjective(seqs, y_idx, layout, self.c2, weights, n_threads)

        theta0 = np.zeros(layout.n_params)
        if self.warm_start and hasattr(self, "coef_"):
            if not np.array_equal(self.classes_, classes) or self.n_features_in_ != F:
                raise ValueError(
                    "warm_start=True needs the same classes and number of features "
                    f"as the previous fit: had {self.classes_.size} classes and "
                    f"{self.n_features_in_} features, got {L} and {F}."
                )
            theta0 = layout.pack(np.ascontiguousarray(self.coef_.T),
                                 self.transition_coef_, self.start_coef_, self.end_coef_)
            # a transition forbidden before (-inf) but free now starts at 0
            theta0[~np.isfinite(theta0)] = 0.0

        with _numba_threads(n_threads):
            theta, history, n_iter = minimize_lbfgs(
                objective, theta0, max_iter=self.max_iter, tol=self.tol,
                verbose=self.verbose,
            )
            final, _ = objective(theta)
        W, A, start, end = layout.unpack(theta)
        # set fitted state only now, all at once: an interrupted fit leaves
        # the previous state untouched
        self.classes_ = classes
        self.n_features_in_ = F
        self.coef_ = W.T  # feature-major storage; coef_ is its (n_classes, n_features) view
        self.transition_coef_ = A
        self.start_coef_ = start
        self.end_coef_ = end
        self.n_iter_ = n_iter
        self.objective_ = final
        self.loss_curve_ = history
        return self

    def _make_layout(self, seqs, y_idx, L, weights=None, masks=None):
        """Which weights are parameters: (feature, label) and label pairs seen in
        sequences of positive weight, unless all_possible_* say otherwise."""
        F = seqs.n_features
        weights = np.ones(len(seqs)) if weights is None else weights
        if self.all_possible_states:
            state_pos = np.arange(F * L, dtype=np.int64)
        else:
            seen = np.zeros((F, L), dtype=np.bool_)
            counts = np.zeros((F, L))
            K._state_counts(
                np.ascontiguousarray(seqs.X.indptr, dtype=np.int64),
                np.ascontiguousarray(seqs.X.indices, dtype=np.int32),
                np.ascontiguousarray(seqs.X.data, dtype=np.float64),
                seqs.offsets, y_idx, weights, L, counts, seen)
            state_pos = np.flatnonzero(seen.reshape(-1))
        if self.all_possible_transitions:
            trans_pos = np.arange(L * L, dtype=np.int64)
        else:
            lengths = seqs.lengths
            first = np.zeros(y_idx.size, dtype=bool)
            first[seqs.offsets[:-1][lengths > 0]] = True
            positive = np.repeat(weights > 0, lengths)
            keep = ~first[1:] & positive[1:]
            pairs = y_idx[:-1][keep].astype(np.int64) * L + y_idx[1:][keep]
            trans_pos = np.unique(pairs)
        if masks is None:
            return ParameterLayout(F, L, state_pos, trans_pos, self.start_end_transitions)
        trans_ok, start_ok, end_ok = masks
        trans_pos = trans_pos[trans_ok.reshape(-1)[trans_pos]]
        ninf = np.where(trans_ok, 0.0, -np.inf)
        return ParameterLayout(F, L, state_pos, trans_pos, self.start_end_transitions,
                               A_fixed=ninf, start_fixed=np.where(start_ok, 0.0, -np.inf),
                               end_fixed=np.where(end_ok, 0.0, -np.inf))

    # -------------------------------------------------------------- predict
    def _weights(self):
        W = np.ascontiguousarray(self.coef_.T)
        A = np.ascontiguousarray(self.transition_coef_, dtype=np.float64)
        return W, A, self.start_coef_, self.end_coef_

    def _check_X(self, X):
        """Validate X once per public call; the helpers below take its result."""
        return check_sequences(X, n_features=self.n_features_in_)

    def _kernel_inputs(self, seqs):
        n_threads = resolve_n_threads(self.n_jobs)
        indptr = np.ascontiguousarray(seqs.X.indptr, dtype=np.int64)
        bounds = chunk_bounds(seqs.offsets, indptr, self.classes_.size, n_threads)
        return (seqs, bounds, indptr,
                np.ascontiguousarray(seqs.X.indices, dtype=np.int32),
                np.ascontiguousarray(seqs.X.data, dtype=np.float64), n_threads)

    def predict(self, X):
        """Most probable label sequence of each input (Viterbi).

        Returns
        -------
        y_pred : list of list of labels, shape (n_sequences,)
        """
        check_is_fitted(self)
        pred = self._predict_indices(self._check_X(X))
        return self._split(self.classes_[pred[0]].tolist(), pred[1])

    def predict_topk(self, X, k=5):
        """The k most probable label sequences of each input (exact n-best).

        Parameters
        ----------
        X : Sequences or list of array-like / sparse matrix
        k : int, default=5

        Returns
        -------
        topk : list of list of (list of labels, float)
            For each input, up to ``k`` pairs ``(labels, log_prob)`` in
            decreasing probability (fewer when fewer valid sequences exist).
            Exact k-best Viterbi, not a beam; among equal scores the path whose
            labels come first in ``classes_`` order at the end wins.
        """
        check_is_fitted(self)
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}.")
        k = int(k)
        seqs = self._check_X(X)
        _, logz, _ = self._marginals(seqs)
        seqs, bounds, indptr, indices, data, n_threads = self._kernel_inputs(seqs)
        W, A, start, end = self._weights()
        paths = np.zeros((seqs.n_tokens, k), dtype=np.int64)
        scores = np.full((len(seqs), k), -np.inf)
        count = np.zeros(len(seqs), dtype=np.int64)
        kernel = K._topk_parallel if bounds.size > 2 else K._topk_serial
        with _numba_threads(n_threads):
            kernel(bounds, indptr, indices, data, seqs.offsets, W, A, start, end, k,
                   paths, scores, count)
        labels = self.classes_[paths].T.tolist() if paths.size else [[] for _ in range(k)]
        off = seqs.offsets
        out = []
        for s in range(len(seqs)):
            out.append([(labels[q][off[s]:off[s + 1]], float(scores[s, q] - logz[s]))
                        for q in range(count[s])])
        return out

    def predict_log_proba_sequences(self, X, y):
        """log p(y | x) of given label sequences (for reranking, or to check a model).

        Returns
        -------
        log_proba : ndarray of shape (n_sequences,)
            -inf for a sequence the constraints forbid; 0 for an empty one.
        """
        check_is_fitted(self)
        seqs = self._check_X(X)
        _, logz, offsets = self._marginals(seqs)
        flat = check_labels(y, np.diff(offsets))
        idx = np.searchsorted(self.classes_, flat)
        idx = np.minimum(idx, self.classes_.size - 1)
        unknown = self.classes_[idx] != flat if flat.size else np.zeros(0, bool)
        if unknown.any():
            k = int(np.flatnonzero(unknown)[0])
            seq = int(np.searchsorted(offsets, k, side="right") - 1)
            raise ValueError(f"y[{seq}][{k - offsets[seq]}] = {flat[k]!r} is not one of "
                             f"the fitted classes {self.classes_.tolist()}.")
        # score of each path, vectorised over all tokens
        E = np.asarray(seqs.X @ np.ascontiguousarray(self.coef_.T))
        tok = E[np.arange(idx.size), idx] if idx.size else np.zeros(0)
        lengths = np.diff(offsets)
        seq_of = np.repeat(np.arange(lengths.size), lengths)
        first = np.zeros(idx.size, dtype=bool)
        first[offsets[:-1][lengths > 0]] = True
        last = np.zeros(idx.size, dtype=bool)
        last[offsets[1:][lengths > 0] - 1] = True
        trans = np.zeros(idx.size)
        if idx.size > 1:
            trans[1:] = self.transition_coef_[idx[:-1], idx[1:]]
        with np.errstate(invalid="ignore"):
            tok = (tok + np.where(first, 0.0, trans)
                   + np.where(first, self.start_coef_[idx], 0.0)
                   + np.where(last, self.end_coef_[idx], 0.0))
        score = np.bincount(seq_of, weights=tok, minlength=lengths.size)
        # bincount cannot carry -inf reliably through float sums: mark them
        forbidden = np.zeros(lengths.size, dtype=bool)
        np.logical_or.at(forbidden, seq_of, np.isneginf(tok))
        out = score - logz
        out[forbidden] = -np.inf
        return out

    def _predict_indices(self, seqs):
        if self.decoding == "marginal":
            P, _, offsets = self._marginals(seqs)
            return np.argmax(P, axis=1) if P.size else np.zeros(0, np.int64), offsets
        seqs, bounds, indptr, indices, data, n_threads = self._kernel_inputs(seqs)
        W, A, start, end = self._weights()
        out = np.zeros(seqs.n_tokens, dtype=np.int64)
        kernel = K._viterbi_parallel if bounds.size > 2 else K._viterbi_serial
        with _numba_threads(n_threads):
            kernel(bounds, indptr, indices, data, seqs.offsets, W, A, start, end, out)
        return out, seqs.offsets

    @staticmethod
    def _split(flat, offsets):
        return [flat[offsets[i]:offsets[i + 1]] for i in range(offsets.size - 1)]

    def predict_marginals(self, X):
        """Marginal probability of each label at each position.

        Returns
        -------
        marginals : list of ndarray, each of shape (length, n_classes)
            Columns in ``classes_`` order; rows sum to 1.
        """
        check_is_fitted(self)
        P, _, offsets = self._marginals(self._check_X(X))
        return [P[offsets[i]:offsets[i + 1]] for i in range(offsets.size - 1)]

    def _marginals(self, seqs):
        seqs, bounds, indptr, indices, data, n_threads = self._kernel_inputs(seqs)
        W, A, start, end = self._weights()
        expA, exp_start, exp_end, shifts = transform_exp(A, start, end)
        out = np.zeros((seqs.n_tokens, self.classes_.size))
        logz = np.zeros(len(seqs))
        kernel = K._marginals_parallel if bounds.size > 2 else K._marginals_serial
        with _numba_threads(n_threads):
            kernel(bounds, indptr, indices, data, seqs.offsets, W, A, start, end,
                   expA, exp_start, exp_end, shifts, out, logz)
        return out, logz, seqs.offsets

    def score(self, X, y, sample_weight=None):
        """Token accuracy of ``predict(X)`` against ``y``.

        ``sample_weight`` (one weight per sequence) weights each token by the
        weight of its sequence.
        """
        check_is_fitted(self)
        pred, offsets = self._predict_indices(self._check_X(X))
        flat = check_labels(y, np.diff(offsets))
        correct = self.classes_[pred] == flat if flat.size else np.zeros(0, bool)
        w = np.repeat(check_sample_weight(sample_weight, offsets.size - 1),
                      np.diff(offsets))
        if w.sum() == 0:
            return 0.0
        return float(np.average(correct, weights=w))

    # ------------------------------------------------------------ inspection
    def top_features(self, feature_names=None, k=10, negative=False):
        """The strongest state weights of each label.

        Parameters
        ----------
        feature_names : array-like of str, shape (n_features,), default=None
            E.g. ``featurizer.get_feature_names_out()``; column numbers if None.
        k : int, default=10
        negative : bool, default=False
            List the most negative weights instead of the most positive.

        Returns
        -------
        top : dict
            ``label -> [(feature_name, weight), ...]``, strongest first.
        """
        check_is_fitted(self)
        if feature_names is None:
            feature_names = np.arange(self.n_features_in_)
        feature_names = np.asarray(feature_names)
        if feature_names.shape != (self.n_features_in_,):
            raise ValueError(
                f"feature_names has shape {feature_names.shape}; expected "
                f"({self.n_features_in_},)."
            )
        k = int(k)
        out = {}
        for lab, w in zip(self.classes_.tolist(), self.coef_):
            order = np.argsort(w if negative else -w, kind="stable")[:k]
            order = order[w[order] != 0]
            out[lab] = [(feature_names[i].item() if hasattr(feature_names[i], "item")
                         else feature_names[i], float(w[i])) for i in order]
        return out

    @property
    def transitions_(self):
        """Transition weights as a labelled table ``{from_label: {to_label: weight}}``,
        with ``"<start>"`` / ``"<end>"`` rows and columns for the start / end weights."""
        check_is_fitted(self)
        labels = self.classes_.tolist()
        table = {a: {b: float(self.transition_coef_[i, j]) for j, b in enumerate(labels)}
                 for i, a in enumerate(labels)}
        table["<start>"] = {b: float(w) for b, w in zip(labels, self.start_coef_)}
        for a, w in zip(labels, self.end_coef_):
            table[a]["<end>"] = float(w)
        return table

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Not declared a classifier on purpose: scikit-learn would then split
        # ``cv=5`` with StratifiedKFold, which cannot stratify label sequences.
        # Plain KFold over sequences is what a sequence labeller needs.
        tags.input_tags.two_d_array = False
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        return tags
