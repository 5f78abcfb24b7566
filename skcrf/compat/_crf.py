"""``CRF``: sklearn-crfsuite's estimator, trained by skcrf."""

import os
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from .._persistence import VersionedPickleMixin
from .._sklearn_compat import Interval, _fit_context
from ._crfsuite_model import CRFsuiteModel
from ._crfsuite_train import fit_crfsuite, to_crfsuite_model, vectorize
from .metrics import flat_accuracy_score
from .pycrfsuite import Tagger

__all__ = ["CRF", "TrainingLog"]

_OTHER_ALGORITHMS = ("l2sgd", "ap", "pa", "arow")
# options of CRFsuite's other training algorithms: L-BFGS has none of them
_NOT_LBFGS = ("calibration_eta", "calibration_rate", "calibration_samples",
              "calibration_candidates", "calibration_max_trials", "pa_type", "c",
              "error_sensitive", "averaging", "variance", "gamma")


class TrainingLog:
    """sklearn-crfsuite's ``training_log_``: ``iterations`` (one dict per
    iteration: ``num``, ``loss``, ``feature_norm``, ``error_norm``,
    ``active_features``, ``linesearch_trials`` (objective evaluations),
    ``linesearch_step`` (here: the length of the step), ``time``, ``scores``)
    and ``last_iteration``."""

    def __init__(self, iterations):
        self.iterations = iterations

    @property
    def last_iteration(self):
        return self.iterations[-1] if self.iterations else {}

    def __repr__(self):
        return f"<TrainingLog: {len(self.iterations)} iterations>"


class CRF(VersionedPickleMixin, BaseEstimator):
    """sklearn-crfsuite's ``CRF``, trained by skcrf: change the import, keep the code.

    Takes sklearn-crfsuite's constructor and input (a list of sequences, each
    a list of feature dicts: ``str`` values one-hot as ``key:value``, numbers
    and booleans as values, lists of ``str``), and offers what code written
    for it reads: ``classes_``, ``predict``, ``predict_marginals`` as
    ``[{label: p}]`` per token, ``state_features_``,
    ``transition_features_``, ``attributes_``, ``training_log_``, ``size_``.
    Inside it is a :class:`skcrf.SequenceDictVectorizer` and a
    :class:`skcrf.LinearChainCRF` with CRFsuite's objective (no start / end
    weights): the same optimum as CRFsuite, faster.

    Parameters
    ----------
    algorithm : {"lbfgs"} or None, default=None
        Only L-BFGS (``None`` means it, as in CRFsuite). ``"l2sgd"``, ``"ap"``,
        ``"pa"`` and ``"arow"`` raise a ``ValueError``.
    min_freq : float, default=None
        Drop (attribute, label) features whose count in training is below it
        (CRFsuite's ``feature.minfreq``; None: keep all).
    all_possible_states, all_possible_transitions : bool, default=None
        As in CRFsuite (None: False).
    c1, c2 : float, default=None
        L1 and L2 coefficients (None: 0 and 1, CRFsuite's defaults).
    max_iterations : int, default=None
        L-BFGS iterations (None: until the stopping rule).
    num_memories : int, default=None
        L-BFGS memory (None: 6, CRFsuite's default).
    epsilon : float, default=None
        Stop when ``|grad| / max(1, |theta|) <= epsilon`` (None: 1e-5).
    period, delta : int, float, default=None
        Stop when the objective improved by less than ``delta`` (relative)
        over the last ``period`` iterations (None: 10 and 1e-5).
    linesearch, max_linesearch : default=None
        Accepted for compatibility; skcrf's L-BFGS always uses the
        Moré–Thuente line search (CRFsuite's default, ``"MoreThuente"``).
    verbose : bool, default=False
        Print one line per iteration.
    model_filename, keep_tempfiles, trainer_cls : default=None / False / None
        CRFsuite model files and trainer classes do not exist here: a
        ``model_filename`` or ``trainer_cls`` raises a ``ValueError``; persist
        the fitted estimator with ``joblib`` or ``pickle``.
    n_jobs : int, default=None
        Kernel threads (an skcrf addition; None: 1).

    The options of CRFsuite's other algorithms (``calibration_*``,
    ``pa_type``, ``c``, ``error_sensitive``, ``averaging``, ``variance``,
    ``gamma``) are accepted only as None.

    Attributes
    ----------
    classes_ : list of str
    state_features_ : dict
        ``(attribute, label) -> weight`` of the non-zero state weights.
    transition_features_ : dict
        ``(label_from, label_to) -> weight`` of the non-zero transition weights.
    attributes_ : list of str
    training_log_ : TrainingLog
    size_ : int
        Size of the model as a CRFsuite model file, in bytes.
    num_attributes_ : int
    vectorizer_ : SequenceDictVectorizer
    crf_ : LinearChainCRF
    """

    _parameter_constraints = {
        "algorithm": [None, str],
        "min_freq": [None, Interval(Real, 0, None, closed="left")],
        "all_possible_states": [None, "boolean"],
        "all_possible_transitions": [None, "boolean"],
        "c1": [None, Interval(Real, 0, None, closed="left")],
        "c2": [None, Interval(Real, 0, None, closed="left")],
        "max_iterations": [None, Interval(Integral, 1, None, closed="left")],
        "num_memories": [None, Interval(Integral, 1, None, closed="left")],
        "epsilon": [None, Interval(Real, 0, None, closed="left")],
        "period": [None, Interval(Integral, 1, None, closed="left")],
        "delta": [None, Interval(Real, 0, None, closed="left")],
        "linesearch": [None, str],
        "max_linesearch": [None, Interval(Integral, 1, None, closed="left")],
        "calibration_eta": "no_validation",
        "calibration_rate": "no_validation",
        "calibration_samples": "no_validation",
        "calibration_candidates": "no_validation",
        "calibration_max_trials": "no_validation",
        "pa_type": "no_validation",
        "c": "no_validation",
        "error_sensitive": "no_validation",
        "averaging": "no_validation",
        "variance": "no_validation",
        "gamma": "no_validation",
        "verbose": ["boolean", Integral],
        "model_filename": "no_validation",
        "keep_tempfiles": ["boolean", None],
        "trainer_cls": "no_validation",
        "n_jobs": [None, Integral],
    }

    def __init__(self, algorithm=None, min_freq=None, all_possible_states=None,
                 all_possible_transitions=None, c1=None, c2=None, max_iterations=None,
                 num_memories=None, epsilon=None, period=None, delta=None,
                 linesearch=None, max_linesearch=None, calibration_eta=None,
                 calibration_rate=None, calibration_samples=None,
                 calibration_candidates=None, calibration_max_trials=None, pa_type=None,
                 c=None, error_sensitive=None, averaging=None, variance=None, gamma=None,
                 verbose=False, model_filename=None, keep_tempfiles=None,
                 trainer_cls=None, n_jobs=None):
        self.algorithm = algorithm
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls
        self.n_jobs = n_jobs

    def _check_options(self):
        algo = "lbfgs" if self.algorithm is None else str(self.algorithm).lower()
        if algo != "lbfgs":
            what = ("is one of CRFsuite's other training algorithms"
                    if algo in _OTHER_ALGORITHMS else "is not a CRFsuite algorithm")
            raise ValueError(
                f"algorithm={self.algorithm!r} {what}; skcrf trains with L-BFGS only: "
                "use algorithm='lbfgs' (or None), with c1 for L1 / elastic net and c2 "
                "for L2.")
        for name in _NOT_LBFGS:
            if getattr(self, name) is not None:
                raise ValueError(f"{name} is an option of CRFsuite's {_OTHER_ALGORITHMS} "
                                 "algorithms, not of L-BFGS (the only algorithm here).")
        if self.trainer_cls is not None:
            raise ValueError("trainer_cls: there is no pycrfsuite trainer here; use "
                             "verbose=True and training_log_ to follow training.")

    def _options(self):
        """The CRF's settings, CRFsuite's defaults for what is None."""
        d = lambda v, default: default if v is None else v  # noqa: E731
        return dict(
            c1=d(self.c1, 0.0), c2=d(self.c2, 1.0),
            max_iter=d(self.max_iterations, 100_000), tol=d(self.delta, 1e-5),
            all_possible_states=bool(d(self.all_possible_states, False)),
            all_possible_transitions=bool(d(self.all_possible_transitions, False)),
            n_jobs=self.n_jobs, verbose=int(bool(self.verbose)),
            num_memories=d(self.num_memories, 6), period=d(self.period, 10),
            epsilon=d(self.epsilon, 1e-5), min_freq=d(self.min_freq, 0.0))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train on ``X`` (lists of items: feature dicts, lists of attribute
        names, in python-crfsuite's forms) and ``y`` (lists of labels).

        ``X_dev`` / ``y_dev``: held-out data; its per-label token precision,
        recall and F1 at the end of training go to
        ``training_log_.last_iteration["scores"]``. With ``model_filename``,
        the model is also written there as a CRFsuite model file.
        """
        self._check_options()
        if (X_dev is None) != (y_dev is None):
            raise ValueError("give both X_dev and y_dev, or neither.")
        vectorizer, crf, labels = fit_crfsuite(X, y, **self._options())
        iterations, previous, evals = [], 0.0, 0
        for r in crf.history_:
            iterations.append({"num": r["iteration"], "loss": r["objective"],
                               "feature_norm": r["x_norm"], "error_norm": r["grad_norm"],
                               "active_features": r["n_active"],
                               "linesearch_trials": r["n_evals"] - evals,
                               "linesearch_step": r["step"],
                               "time": r["seconds"] - previous, "scores": {}})
            previous, evals = r["seconds"], r["n_evals"]
        self.vectorizer_ = vectorizer
        self.crf_ = crf
        self.labels_ = labels
        self.training_log_ = TrainingLog(iterations)
        for key in ("_tagger", "_crfsuite", "_crfsuite_data"):
            self.__dict__.pop(key, None)
        if X_dev is not None and iterations:
            iterations[-1]["scores"] = self._dev_scores(X_dev, y_dev)
        if self.model_filename is not None:
            with open(self.model_filename, "wb") as fh:
                fh.write(self._crfsuite_model().to_bytes())
        return self

    def _dev_scores(self, X_dev, y_dev):
        from sklearn.metrics import precision_recall_fscore_support

        from .metrics import _flatten

        pred = self.predict(X_dev)
        labels = self.classes_
        p, r, f, s = precision_recall_fscore_support(
            _flatten(y_dev), _flatten(pred), labels=labels, zero_division=0)
        return {lab: {"precision": float(a), "recall": float(b), "f1": float(c),
                      "support": int(n)} for lab, a, b, c, n in zip(labels, p, r, f, s)}

    # ------------------------------------------------------------ predict
    def _fitted(self):
        """Fitted here, or a CRFsuite model file (``model_filename``) to use:
        sklearn-crfsuite's ``CRF(model_filename=path)`` predicts without fit."""
        if hasattr(self, "crf_"):
            return True
        if "_crfsuite" not in self.__dict__ and "_crfsuite_data" in self.__dict__:
            # a model read from a CRFsuite file (from_crfsuite), after unpickling
            self.__dict__["_crfsuite"] = CRFsuiteModel.from_bytes(
                self.__dict__["_crfsuite_data"], "<crfsuite model>")
        if "_crfsuite_data" in self.__dict__ and self.model_filename is None:
            return False
        path = self.model_filename
        if path is not None and os.path.exists(path):
            if "_crfsuite" not in self.__dict__:
                with open(path, "rb") as fh:
                    self.__dict__["_crfsuite"] = CRFsuiteModel.from_bytes(fh.read(), path)
            return False
        raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: "
                             "call fit, or give model_filename of an existing model file.")

    def _index_sequences(self, X):
        """(label index per token in ``labels_`` order, offsets)."""
        if self._fitted():
            arrays = vectorize(self.vectorizer_.transform, X).kernel_arrays()
            return arrays, None
        model = self.__dict__["_crfsuite"]
        return model.arrays([_seq(x) for x in X]), model

    def predict(self, X):
        """Label sequences of ``X`` (lists of items), as sklearn-crfsuite
        returns them: a NumPy object array of label lists."""
        return _as_array([self._predict_lists(X)][0])

    def _predict_lists(self, X):
        if self._fitted():
            return self.crf_.predict(vectorize(self.vectorizer_.transform, X))
        model = self.__dict__["_crfsuite"]
        arrays = model.arrays([_seq(x) for x in X])
        idx, _ = model.tag(arrays, engine="numba")
        labels = [model.labels[i] for i in idx.tolist()]
        off = arrays.offsets.tolist()
        return [labels[a:b] for a, b in zip(off[:-1], off[1:])]

    def predict_single(self, xseq):
        """Labels of one sequence (a list of items)."""
        return self._predict_lists([xseq])[0]

    def predict_marginals(self, X):
        """Per token, a ``{label: probability}`` dict (an object array of lists
        of them, one list per sequence, as sklearn-crfsuite returns)."""
        return _as_array(self._marginal_lists(X))

    def _marginal_lists(self, X):
        if self._fitted():
            labels = self.crf_.classes_.tolist()
            P = self.crf_.predict_marginals(vectorize(self.vectorizer_.transform, X))
        else:
            model = self.__dict__["_crfsuite"]
            labels = model.labels
            arrays = model.arrays([_seq(x) for x in X])
            flat, _ = model.marginals(arrays, engine="numba")
            off = arrays.offsets.tolist()
            P = [flat[a:b] for a, b in zip(off[:-1], off[1:])]
        return [[dict(zip(labels, row)) for row in m.tolist()] for m in P]

    def predict_marginals_single(self, xseq):
        return self._marginal_lists([xseq])[0]

    def predict_topk(self, X, k=5):
        """The k most probable label sequences of each input: lists of
        ``(labels, log_prob)`` (an skcrf addition)."""
        if self._fitted():
            return self.crf_.predict_topk(vectorize(self.vectorizer_.transform, X), k)
        model = self.__dict__["_crfsuite"]
        from .._inference import topk_sequences

        return topk_sequences(model.arrays([_seq(x) for x in X]), model.weights, k,
                              labels=model.labels)

    def score(self, X, y):
        """Token accuracy (sklearn-crfsuite's ``flat_accuracy_score``)."""
        return flat_accuracy_score(y, self._predict_lists(X))

    # ------------------------------------------------------------ inspection
    def _crfsuite_model(self):
        """The model as CRFsuite holds it (built once after fit)."""
        if "_crfsuite" not in self.__dict__:
            if not self._fitted():
                return self.__dict__["_crfsuite"]
            self.__dict__["_crfsuite"] = to_crfsuite_model(self.vectorizer_, self.crf_,
                                                           self.labels_)
        return self.__dict__["_crfsuite"]

    def _has_model(self):
        try:
            self._fitted()
            return True
        except NotFittedError:
            return False

    @property
    def tagger_(self):
        """A ``pycrfsuite.Tagger`` (skcrf's) of the model, None before fit."""
        if not self._has_model():
            return None
        if "_tagger" not in self.__dict__:
            tagger = Tagger()
            tagger.open_inmemory(self._crfsuite_bytes())
            self.__dict__["_tagger"] = tagger
        return self.__dict__["_tagger"]

    def _crfsuite_bytes(self):
        if "_crfsuite_data" not in self.__dict__:
            if self._fitted():
                self.__dict__["_crfsuite_data"] = self._crfsuite_model().to_bytes()
            else:
                with open(self.model_filename, "rb") as fh:
                    self.__dict__["_crfsuite_data"] = fh.read()
        return self.__dict__["_crfsuite_data"]

    @property
    def classes_(self):
        """Labels in CRFsuite's order (of first appearance in training)."""
        return None if not self._has_model() else list(self._crfsuite_model().labels)

    @property
    def size_(self):
        """Size of the model as a CRFsuite model file, in bytes."""
        return None if not self._has_model() else len(self._crfsuite_bytes())

    @property
    def attributes_(self):
        """The attributes the model keeps (those with a non-zero state weight)."""
        return None if not self._has_model() else list(self.tagger_.info().attributes)

    @property
    def num_attributes_(self):
        return None if not self._has_model() else len(self.attributes_)

    @property
    def state_features_(self):
        """``{(attribute, label): weight}``, as sklearn-crfsuite shows them (from
        the model dump: six decimals)."""
        return None if not self._has_model() else self.tagger_.info().state_features

    @property
    def transition_features_(self):
        """``{(label_from, label_to): weight}``, as sklearn-crfsuite shows them."""
        return None if not self._has_model() else self.tagger_.info().transitions

    def __getstate__(self):
        state = super().__getstate__()
        # caches, rebuilt on use; but a model that came from CRFsuite bytes
        # (from_crfsuite) and was never refitted keeps them: they are the model
        keep = not hasattr(self, "crf_") and self.model_filename is None
        for key in ("_tagger", "_crfsuite") + (() if keep else ("_crfsuite_data",)):
            state.pop(key, None)
        return state

    @classmethod
    def from_crfsuite(cls, data, name="<crfsuite model>"):
        """A CRF that predicts with a CRFsuite model, given as the bytes of a
        model file (``crf1d``, as CRFsuite 0.12 and python-crfsuite write
        them); the file is parsed and checked now (a malformed one raises
        :class:`~skcrf.exceptions.ModelFileError` naming ``name``), and no
        file is kept open or written: a later ``fit`` replaces the model."""
        data = bytes(data)
        crf = cls()
        crf.__dict__["_crfsuite"] = CRFsuiteModel.from_bytes(data, name)
        crf.__dict__["_crfsuite_data"] = data
        return crf

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.required = True
        tags.target_tags.single_output = False
        return tags


def _seq(xseq):
    return xseq._items if hasattr(xseq, "_items") else xseq


def _as_array(lists):
    """An object array of per-sequence lists, as sklearn-crfsuite builds it
    (``np.array(list, dtype=object)``: 2-D when every sequence has the same
    length)."""
    return np.array(lists, dtype=object)
