"""LinearChainCRF: the estimator (parameters, fit, predict*, inspection).

What it delegates: the parameter layout to :mod:`skcrf._training.layout`,
the data term to :mod:`skcrf._training.loss`, the penalty to
:mod:`skcrf._training.penalty`, the optimiser to
:mod:`skcrf._training.optimize`, every prediction to the pure functions of
:mod:`skcrf._inference`, threads to :mod:`skcrf._kernels.parallel` and
tag-scheme constraints to :mod:`skcrf._constraints`.
"""

import sys
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from . import _inference as inference
from ._arrays import Weights, aligned_copy, aligned_zeros, sequence_of, split_at, split_labels
from ._compile_notice import compile_notice
from ._constraints import check_labels_allowed, constraint_masks
from ._inspection import top_state_features, transition_table
from ._kernels import compile_helper
from ._kernels.parallel import resolve_n_threads
from ._persistence import VersionedPickleMixin
from ._sklearn_compat import Interval, StrOptions, _fit_context
from ._tag_schemes import SCHEME_NAMES
from ._training.early_stopping import HeldOutMonitor, split_validation
from ._training.layout import build_layout, count_pairs
from ._training.loss import CRFLoss, Objective, trim_heap
from ._training.optimize import minimize_lbfgs, minimize_owlqn, minimize_scipy
from ._training.penalty import ElasticNet
from ._validation import check_labels, check_sample_weight, check_sequences, checked_kernel_arrays

__all__ = ["LinearChainCRF"]


class LinearChainCRF(VersionedPickleMixin, BaseEstimator):
    r"""Linear-chain conditional random field trained by penalised likelihood.

    The model scores a label sequence :math:`y` for token features
    :math:`x_1 \dots x_T` as

    .. math::

        s(x, y) = \sum_t x_t^\top W_{:, y_t} + \sum_{t>1} A_{y_{t-1}, y_t}
                  + b_{y_1} + e_{y_T}

    with :math:`p(y \mid x) = \exp s(x, y) / Z(x)`. Training minimises
    :math:`-\sum_i w_i \log p(y_i \mid x_i) + c_1 \lVert\theta\rVert_1 + c_2
    \lVert\theta\rVert^2` (CRFsuite's objective) with L-BFGS (``c1 = 0``;
    L-BFGS-B's iterations, compiled and threaded) or OWL-QN (``c1 > 0``); the
    kernels (forward-backward, gradient, Viterbi) are Numba functions that
    run in parallel over sequences.

    Parameters
    ----------
    c1 : float, default=0.0
        Coefficient of the L1 norm of all weights (CRFsuite's ``c1``). With
        ``c1 > 0`` training minimises the elastic net
        :math:`-\sum_i w_i \log p(y_i \mid x_i) + c_1 \lVert\theta\rVert_1 +
        c_2 \lVert\theta\rVert^2` with OWL-QN (orthant-wise L-BFGS, CRFsuite's
        method for ``c1``; its iterates match CRFsuite's): many weights become
        exactly 0 (``n_nonzero_``) and the model is pickled sparse.
    c2 : float, default=1.0
        Coefficient of the squared L2 norm of all weights. The same value as
        CRFsuite's ``c2`` gives the same optimum.
    solver : {"lbfgs", "scipy"}, default="lbfgs"
        ``"lbfgs"``: skcrf's L-BFGS, the iterations of scipy's L-BFGS-B
        (same directions, same Moré–Thuente line search and constants; tested
        iterate for iterate) with the vector algebra compiled and threaded and
        the history in float32: several times cheaper per iteration on large
        models, about half the optimiser's memory. ``"scipy"``: scipy's
        ``minimize(method="L-BFGS-B")`` on the same objective (one thread,
        float64 history): the reference, e.g. to check a result. Both stop by
        the same rule and reach the same optimum. ``c1 > 0`` needs
        ``"lbfgs"`` (OWL-QN).
    max_iter : int, default=1000
        Maximum number of L-BFGS iterations. A ``ConvergenceWarning`` is
        emitted when it is reached.
    tol : float, default=1e-5
        Stopping rule (CRFsuite's): stop when the objective improved by less
        than ``tol`` relative over the last 10 iterations. Training also stops
        when the gradient vanishes, or (with a ``ConvergenceWarning``) when
        the line search finds no step that decreases the objective.
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
    constraints : str or list of (str, str), default=None
        Allowed label transitions. A forbidden transition gets weight -inf in
        training (the partition function) and in decoding, so the model is a
        distribution over valid sequences only. A scheme name (``"BIO"``,
        ``"BIOES"``, ``"BIOUL"``, ``"BMES"``, ``"BB2B3MES"``, ``"BI"``) allows what the
        scheme allows (e.g. no ``O -> I-PER``, no start -> ``I-*``); a list
        gives the allowed ``(from, to)`` pairs, where ``"<start>"`` /
        ``"<end>"`` stand for the sequence boundaries (boundaries are free
        unless such pairs are listed). See :func:`skcrf.allowed_transitions`.
    decoding : {"viterbi", "marginal"}, default="viterbi"
        ``predict``: the most probable whole sequence (Viterbi), or each
        token's most probable label under the (constrained) marginals, which
        maximises the expected number of correct tokens.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the training sequences, score them
        after every iteration, stop after ``n_iter_no_change`` iterations
        without improvement and keep the weights of the best iteration.
    validation_fraction : float, default=0.1
        Fraction of the sequences held out for early stopping.
    n_iter_no_change : int, default=10
        Iterations without a better held-out score before stopping.
    scoring : None, "token_accuracy", "sequence_accuracy" or callable, default=None
        Held-out score for early stopping: token accuracy by default, or a
        scorer ``scorer(estimator, X, y)`` such as
        ``skcrf.metrics.make_span_f1_scorer("BIO")``.
    random_state : int, RandomState or None, default=None
        Which sequences are held out for early stopping.

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
    stop_reason_ : str
        Why training stopped: ``"tol"`` (the stopping rule above),
        ``"converged"`` (gradient ~0), ``"max_iter"``, ``"max_fun"`` or
        ``"line_search"`` (no decreasing step found); the last three
        come with a ``ConvergenceWarning``.
    n_params_ : int
        Number of free weights.
    n_nonzero_ : int
        Number of non-zero state and transition weights (with ``c1 > 0``,
        usually far fewer than ``n_params_``).
    history_ : list of dict
        One record per iteration: ``iteration``, ``objective``, ``grad_norm``,
        ``n_active`` (non-zero weights), ``step`` (length of the step),
        ``seconds``, ``n_evals`` and, with early stopping, ``held_out``.
    validation_scores_ : list of float
        Held-out score after each iteration (early stopping only).
    best_iteration_ : int
        The iteration whose weights were kept (early stopping only; else
        ``n_iter_``).

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
        "c1": [Interval(Real, 0, None, closed="left")],
        "c2": [Interval(Real, 0, None, closed="left")],
        "solver": [StrOptions({"lbfgs", "scipy"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "all_possible_states": ["boolean"],
        "all_possible_transitions": ["boolean"],
        "start_end_transitions": ["boolean"],
        "n_jobs": [Integral, None],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "constraints": [None, StrOptions(set(SCHEME_NAMES)), list, tuple, set, frozenset],
        "decoding": [StrOptions({"viterbi", "marginal"})],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "scoring": [None, StrOptions({"token_accuracy", "sequence_accuracy"}), callable],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        c1=0.0,
        c2=1.0,
        solver="lbfgs",
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
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        scoring=None,
        random_state=None,
    ):
        self.c1 = c1
        self.c2 = c2
        self.solver = solver
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
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.scoring = scoring
        self.random_state = random_state

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
        # a first fit of a new shape compiles: say so (once) rather than look hung
        with compile_notice(sys.stderr if self.verbose else None):
            compile_helper.wait("fit")   # a helper compiling these kernels ahead: wait, load
            return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight=None, held_out=None, scoring=None, callback=None):
        """``fit``, optionally scoring given held-out data ``(X_dev, y_dev)`` after
        every iteration without stopping on it (the command line's ``--dev``): its
        scores go to ``validation_scores_``; ``callback(record, theta)`` after every
        iteration (the CRFsuite-style training log of :mod:`skcrf.compat`)."""
        seqs = check_sequences(X)
        if len(seqs) == 0:
            raise ValueError("X is empty: need at least one sequence to fit.")
        if seqs.n_tokens == 0:
            raise ValueError("Every training sequence is empty: nothing to learn from.")
        flat = check_labels(y, seqs.lengths)
        weights = check_sample_weight(sample_weight, len(seqs))
        report_only = held_out is not None
        if report_only:
            X_dev = check_sequences(held_out[0], n_features=seqs.n_features, what="X_dev")
            held_out = (X_dev, check_labels(held_out[1], X_dev.lengths, what="y_dev"))
        elif self.early_stopping:
            train, val = split_validation(len(seqs), self.validation_fraction,
                                          self.random_state)
            token = np.arange(seqs.n_tokens)
            seq_of_token = np.repeat(np.arange(len(seqs)), seqs.lengths)
            in_val = np.isin(seq_of_token, val)
            held_out = (seqs[val], flat[token[in_val]])
            seqs, flat, weights = seqs[train], flat[token[~in_val]], weights[train]
            if seqs.n_tokens == 0:
                raise ValueError("Every training sequence left after holding out "
                                 "validation_fraction is empty.")
        if not (weights[seqs.lengths > 0] > 0).any():
            raise ValueError("sample_weight is 0 for every non-empty sequence: "
                             "nothing to learn from.")
        classes, y_idx = np.unique(flat, return_inverse=True)
        y_idx = y_idx.astype(np.int32).reshape(-1)
        L, F = classes.size, seqs.n_features
        del flat   # (labels as str, 24 bytes each, and their checks: not held while optimising)
        trim_heap()

        masks = constraint_masks(self.constraints, classes)
        if masks is not None:
            check_labels_allowed(y_idx, seqs.offsets, classes, masks)
        arrays = seqs.kernel_arrays()
        counts = count_pairs(arrays, y_idx, weights, L, F)
        layout = self._layout(counts, masks)
        n_threads = resolve_n_threads(self.n_jobs)
        loss = CRFLoss(arrays, y_idx, weights, layout, counts, n_threads=n_threads)
        # (the layout and the loss keep what they need: no second index copy held)
        del counts, y_idx, arrays
        trim_heap()
        monitor = None
        if held_out is not None:
            monitor = HeldOutMonitor(
                clone(self), *held_out, classes, layout,
                scoring if report_only else self.scoring,
                self.max_iter + 1 if report_only else self.n_iter_no_change, n_threads)
        return self._fit_terms([loss], layout, classes, monitor, keep_best=not report_only,
                               callback=callback)

    def _layout(self, counts, masks):
        """The parameter layout of a fit from its (summed) pair counts."""
        return build_layout(counts, all_possible_states=self.all_possible_states,
                            all_possible_transitions=self.all_possible_transitions,
                            start_end=self.start_end_transitions, masks=masks,
                            min_state_count=self._optimizer_options()["min_state_count"])

    def _fit_terms(self, terms, layout, classes, monitor=None, keep_best=True,
                   callback=None):
        """Minimise ``sum of data terms + penalty`` and set the fitted state.

        ``terms`` evaluate the data term of their shard of the training data
        (local :class:`CRFLoss` objects, or remote ones: see
        :func:`skcrf.dask.fit_pipeline`); ``callback(record, theta)`` is called
        after every iteration.
        """
        options = self._optimizer_options()
        options.pop("min_state_count")
        penalty = ElasticNet(self.c1, self.c2)
        objective = Objective(terms, penalty, n_threads=self._n_threads())
        theta0 = self._initial_parameters(layout, classes, layout.n_features)

        def on_iteration(record, theta):
            stop = bool(monitor(record, theta)) if monitor is not None else False
            if callback is not None:
                callback(record, theta)
            return stop

        common = dict(max_iter=self.max_iter, tol=self.tol, verbose=self.verbose,
                      monitor=on_iteration if monitor or callback else None, **options)
        # the optimiser's vector algebra runs on the fit's threads (a cluster
        # fit's driver holds only the weights: its threads are the local ones)
        if penalty.c1 > 0:
            if self.solver == "scipy":
                raise ValueError("solver='scipy' minimises the L2 objective only; "
                                 "c1 > 0 needs solver='lbfgs' (OWL-QN).")
            result = minimize_owlqn(objective, theta0, c1=penalty.c1,
                                    n_threads=self._n_threads(), **common)
        else:
            minimize = minimize_scipy if self.solver == "scipy" else minimize_lbfgs
            result = minimize(objective, theta0, n_threads=self._n_threads(), **common)
        theta, objective_value, best = result.x, result.fun, result.n_iter
        if monitor is not None and monitor.best_theta is not None and keep_best:
            theta, objective_value = monitor.best_theta, monitor.best_objective
            best = monitor.best_iteration
        # the local terms' buffers freed before the dense weights are made (skcrf.dask's
        # remote terms hold theirs on the workers)
        for term in terms:
            if hasattr(term, "release"):
                term.release()
        W, A, start, end = layout.unpack(theta)
        # fitted state set only now, at once: an interrupted fit keeps the previous one
        self.classes_ = classes
        self.n_features_in_ = layout.n_features
        self.coef_ = W.T  # feature-major storage; coef_ is its (n_classes, n_features) view
        self.transition_coef_ = A
        self.start_coef_ = start
        self.end_coef_ = end
        self.n_iter_ = result.n_iter
        self.objective_ = objective_value
        self.loss_curve_ = result.loss_curve
        self.stop_reason_ = result.reason
        self.n_params_ = layout.n_params
        self.n_nonzero_ = int(np.count_nonzero(theta))
        self.history_ = [r.as_dict() for r in result.history]
        self.best_iteration_ = best
        if monitor is not None:
            self.validation_scores_ = monitor.scores
        else:
            self.__dict__.pop("validation_scores_", None)
        self._load_decoding_kernels()
        return self

    def _load_decoding_kernels(self):
        """Load the decoding kernels and input check now, not in the first ``predict``
        (a helper still compiling them: the first ``predict`` waits; one done: cached)."""
        if compile_helper.running("predict"):
            return
        weights = Weights.from_arrays(self.coef_.T[:1], self.transition_coef_,
                                      self.start_coef_, self.end_coef_)
        inference.load_kernels(weights, self.decoding, self._n_threads())

    def _optimizer_options(self):
        """L-BFGS memory, stopping-rule period, gradient test, minimum count of a
        state feature (CRFsuite's options; skcrf.compat exposes them)."""
        return dict(m=10, period=10, epsilon=None, min_state_count=0.0)

    def _initial_parameters(self, layout, classes, n_features):
        if not (self.warm_start and hasattr(self, "coef_")):
            return np.zeros(layout.n_params)
        if not np.array_equal(self.classes_, classes) or self.n_features_in_ != n_features:
            raise ValueError(
                "warm_start=True needs the same classes and number of features "
                f"as the previous fit: had {self.classes_.size} classes and "
                f"{self.n_features_in_} features, got {classes.size} and {n_features}."
            )
        theta0 = layout.pack(np.ascontiguousarray(self.coef_.T), self.transition_coef_,
                             self.start_coef_, self.end_coef_)
        # a transition forbidden before (-inf) but free now starts at 0
        theta0[~np.isfinite(theta0)] = 0.0
        return theta0

    # -------------------------------------------------------------- predict
    def _weights(self):
        return Weights.from_arrays(self.coef_.T, self.transition_coef_,
                                             self.start_coef_, self.end_coef_)

    def _arrays(self, X):
        """Validate X (once per public call) and return its kernel arrays."""
        compile_helper.wait()   # (a helper compiling the decoding kernels ahead)
        return checked_kernel_arrays(X, n_features=self.n_features_in_)

    def _n_threads(self):
        return resolve_n_threads(self.n_jobs)

    def predict(self, X):
        """Most probable label sequence of each input (Viterbi), or each
        token's most probable label with ``decoding="marginal"``.

        Returns
        -------
        y_pred : list of list of labels, shape (n_sequences,)
        """
        check_is_fitted(self)
        arrays = self._arrays(X)
        return split_labels(self.classes_, self._predict_indices(arrays), arrays.offsets)

    def _predict_indices(self, arrays):
        return inference.predict_indices(arrays, self._weights(), self.decoding,
                                         self._n_threads())

    def predict_marginals(self, X):
        """Marginal probability of each label at each position.

        Returns
        -------
        marginals : list of ndarray, each of shape (length, n_classes)
            Columns in ``classes_`` order; rows sum to 1.
        """
        check_is_fitted(self)
        arrays = self._arrays(X)
        P, _ = inference.marginals(arrays, self._weights(), self._n_threads())
        return split_at(P, arrays.offsets)

    def predict_topk(self, X, k=5):
        """The k most probable label sequences of each input (exact n-best).

        Parameters
        ----------
        X : Sequences or list of array-like / sparse matrix
        k : int, default=5
            At most this many sequences per input; larger than the number of
            label sequences an input has is fine. A ``k`` whose work arrays
            would need more than 1 GiB is refused.

        Returns
        -------
        topk : list of list of (list of labels, float)
            For each input, up to ``k`` pairs ``(labels, log_prob)`` in
            decreasing probability (fewer when fewer valid sequences exist).
            Exact k-best Viterbi, not a beam; among equal scores the path whose
            labels come first in ``classes_`` order, compared from the last
            token backwards, comes first.
        """
        check_is_fitted(self)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (Integral, np.integer)) \
                or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}.")
        return inference.topk_sequences(self._arrays(X), self._weights(), k,
                                        self._n_threads(), labels=self.classes_)

    def predict_log_proba_sequences(self, X, y):
        """log p(y | x) of given label sequences (for reranking, or to check a model).

        Returns
        -------
        log_proba : ndarray of shape (n_sequences,)
            -inf for a sequence the constraints forbid; 0 for an empty one.
        """
        check_is_fitted(self)
        arrays = self._arrays(X)
        flat = check_labels(y, np.diff(arrays.offsets))
        idx = self._label_indices(flat, arrays.offsets)
        weights, n_threads = self._weights(), self._n_threads()
        scores = inference.path_scores(arrays, weights, idx, n_threads)
        _, log_z = inference.marginals(arrays, weights, n_threads)
        return scores - log_z

    def _label_indices(self, flat, offsets):
        """Indices into ``classes_`` of labels, refusing unknown ones."""
        idx = np.searchsorted(self.classes_, flat)
        idx = np.minimum(idx, self.classes_.size - 1)
        unknown = self.classes_[idx] != flat if flat.size else np.zeros(0, bool)
        if unknown.any():
            k = int(np.flatnonzero(unknown)[0])
            seq = int(sequence_of(offsets, k))
            raise ValueError(f"y[{seq}][{k - offsets[seq]}] = {flat[k]!r} is not one of "
                             f"the fitted classes {self.classes_.tolist()}.")
        return idx

    def score(self, X, y, sample_weight=None):
        """Token accuracy of ``predict(X)`` against ``y``.

        ``sample_weight`` (one weight per sequence) weights each token by the
        weight of its sequence.
        """
        check_is_fitted(self)
        arrays = self._arrays(X)
        pred = self._predict_indices(arrays)
        lengths = np.diff(arrays.offsets)
        flat = check_labels(y, lengths)
        correct = self.classes_[pred] == flat if flat.size else np.zeros(0, bool)
        w = np.repeat(check_sample_weight(sample_weight, lengths.size), lengths)
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
        k : int or None, default=10
            How many per label; None for all non-zero weights.
        negative : bool, default=False
            List the most negative weights instead of the most positive.

        Returns
        -------
        top : dict
            ``label -> [(feature_name, weight), ...]``, strongest first.
        """
        check_is_fitted(self)
        return top_state_features(self.classes_, self.coef_, feature_names, k, negative)

    @property
    def transitions_(self):
        """Transition weights as a labelled table ``{from_label: {to_label: weight}}``,
        with ``"<start>"`` / ``"<end>"`` rows and columns for the start / end weights."""
        check_is_fitted(self)
        return transition_table(self.classes_, self.transition_coef_, self.start_coef_,
                                self.end_coef_)

    # ------------------------------------------------------------ pickling
    def __getstate__(self):
        """Store ``coef_`` as a sparse matrix when that is smaller (weights
        that have no parameter, or that L1 zeroed, are exactly 0)."""
        state = super().__getstate__()
        coef = state.get("coef_")
        if isinstance(coef, np.ndarray) and coef.ndim == 2:
            nnz = np.count_nonzero(coef)
            if nnz * 12 + (coef.shape[1] + 1) * 8 < coef.size * 8:
                state["coef_"] = sp.csr_matrix(coef.T)  # feature-major, as in memory
                state["_coef_is_sparse"] = True
        return state

    def __setstate__(self, state):
        if state.pop("_coef_is_sparse", False):
            W = state["coef_"]    # (feature-major CSR) densified straight into its place
            state["coef_"] = W.toarray(out=aligned_zeros(W.shape, W.dtype)).T
        elif isinstance(state.get("coef_"), np.ndarray) and state["coef_"].ndim == 2:
            # feature-major again and on a cache line, as a fit leaves it
            # (unpickled, it starts wherever the allocator put it)
            state["coef_"] = aligned_copy(state["coef_"].T).T
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Not a classifier on purpose: scikit-learn would then split ``cv=5`` with
        # StratifiedKFold, which cannot stratify label sequences (KFold can).
        tags.input_tags.two_d_array = False
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        return tags
