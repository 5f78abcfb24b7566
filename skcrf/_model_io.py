"""Model files that are safe to open: plain arrays and JSON, never pickle.

A model file is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays) read with
``allow_pickle=False``. Its array ``__meta__`` holds UTF-8 JSON:

``format`` / ``format_version``
    ``"skcrf-model"`` / 1.
``kind``
    ``"tagger"`` (a ``SequenceFeaturizer`` + ``LinearChainCRF`` pipeline) or
    ``"segmenter"`` (a ``WordSegmenter``).
``labels``
    The CRF's classes, in order.
``crf``
    Its parameters and fitted scalars (``n_iter_``, ``objective_``, ...).
``featurizer``
    Input kind, number of token columns and of features, the templates
    (each ``{"type": ..., ...}``, see :mod:`skcrf._templates`), the strings
    the feature names are made of, and the parameters.
``segmenter``
    The ``WordSegmenter`` parameters (segmenters only).
``oov_model``
    A segmenter's OOV model (``WordSegmenter.oov_crf_``), when it has one:
    its own ``labels``, ``crf`` and ``featurizer`` entries, its arrays named
    as above with the prefix ``oov.``; the words it never proposes as new
    (``known_words_``) are the arrays ``known_words`` (UTF-8, concatenated)
    and ``known_word_lengths`` (bytes per word). Such files have
    ``format_version`` 2, so that a reader of version 1, which would segment
    without the OOV model, refuses them; every other file is version 1.

Arrays: ``W_data`` / ``W_indices`` / ``W_indptr`` (the state weights as a
CSR matrix, features x labels), ``A``, ``start``, ``end``; ``vocab_keys``
(uint64 feature keys, column order), ``feature_slots``, ``feature_codes``,
``feature_counts``; ``template<i>.<name>`` for templates that carry tables
(dictionary, accessor variety).

:func:`save_model` writes one atomically (a temporary file, then a rename);
:func:`load_model` returns the fitted estimator (needs scikit-learn);
:func:`read_model` returns a :class:`Model`, which tags with NumPy and Numba
only — what the command line uses. Small blocks of window-template models
are tagged with NumPy alone (:mod:`skcrf._numpy_tagger`), so that a short
``skcrf tag`` never loads Numba.
"""

import json
import os
import tempfile
import zipfile

import numpy as np

from . import _numpy_tagger
from ._arrays import ONE, KernelArrays, Weights
from ._templates import TemplateSet, template_from_state
from ._units import read_units
from ._version import __version__

__all__ = ["save_model", "load_model", "read_model", "Model", "ModelFileError"]

FORMAT, FORMAT_VERSION = "skcrf-model", 2


class ModelFileError(ValueError):
    """Not a readable skcrf model file (missing, truncated, corrupted, other format)."""


# ------------------------------------------------------------------ save
def _json_param(value):
    try:
        json.dumps(value)
        return value
    except TypeError:
        return None


def save_model(estimator, path):
    """Write a fitted ``Pipeline(SequenceFeaturizer, LinearChainCRF)`` or
    ``WordSegmenter`` to ``path`` (plain arrays + JSON, see the module doc)."""
    from sklearn.pipeline import Pipeline
    from sklearn.utils.validation import check_is_fitted

    from ._crf import LinearChainCRF
    from ._featurizer import SequenceFeaturizer
    from ._segmenter import WordSegmenter

    # version 1 unless the file holds what a version-1 reader would ignore
    meta = {"format": FORMAT, "format_version": 1, "skcrf_version": __version__}
    arrays = {}
    if isinstance(estimator, WordSegmenter):
        check_is_fitted(estimator)
        meta["kind"] = "segmenter"
        meta["segmenter"] = {k: _json_param(v) for k, v in estimator.get_params().items()}
        feat, crf = estimator.featurizer_, estimator.crf_
    elif (isinstance(estimator, Pipeline) and len(estimator.steps) == 2
          and isinstance(estimator[0], SequenceFeaturizer)
          and isinstance(estimator[-1], LinearChainCRF)):
        meta["kind"] = "tagger"
        feat, crf = estimator[0], estimator[-1]
    else:
        raise TypeError("save_model takes a fitted Pipeline of a SequenceFeaturizer and a "
                        f"LinearChainCRF, or a WordSegmenter; got {type(estimator).__name__}.")
    meta.update(_write_part(feat, crf, "", arrays))
    if meta["kind"] == "segmenter" and getattr(estimator, "oov_crf_", None) is not None:
        meta["format_version"] = 2
        meta["oov_model"] = _write_part(estimator.oov_featurizer_, estimator.oov_crf_,
                                        "oov.", arrays)
        words = [w.encode("utf-8") for w in sorted(estimator.known_words_)]
        arrays["known_words"] = np.frombuffer(b"".join(words), dtype=np.uint8)
        arrays["known_word_lengths"] = np.array([len(w) for w in words], dtype=np.int64)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"),
                                       dtype=np.uint8)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".skcrf-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _write_part(feat, crf, prefix, arrays):
    """The metadata of one fitted featurizer + CRF; its arrays go into
    ``arrays`` under ``prefix``."""
    import scipy.sparse as sp
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(feat)
    check_is_fitted(crf)
    part = {"labels": crf.classes_.tolist()}
    part["crf"] = {
        "params": {k: _json_param(v) for k, v in crf.get_params().items()},
        "fitted": {k: getattr(crf, k) for k in ("n_iter_", "objective_", "stop_reason_",
                                                "n_params_", "n_nonzero_")
                   if hasattr(crf, k)},
    }
    W = sp.csr_matrix(np.ascontiguousarray(crf.coef_.T))
    own = dict(W_data=W.data, W_indices=W.indices.astype(np.int64),
               W_indptr=W.indptr.astype(np.int64), A=crf.transition_coef_,
               start=crf.start_coef_, end=crf.end_coef_)
    templates = []
    for i, t in enumerate(feat._templates_.templates):
        state, tarrays = t.to_state()
        templates.append(state)
        for name, arr in tarrays.items():
            own[f"template{i}.{name}"] = arr
    params = {k: _json_param(v) for k, v in feat.get_params().items()
              if k not in ("dictionary", "unlabeled_text")}
    part["featurizer"] = {"input_kind": feat.input_kind_, "n_columns": feat.n_columns_,
                          "n_features": feat.n_features_out_, "templates": templates,
                          "strings": list(feat._feature_strings_), "params": params}
    own.update(vocab_keys=feat._vocab_keys_, feature_slots=feat._feature_slots_,
               feature_codes=feat._feature_codes_, feature_counts=feat.feature_counts_)
    arrays.update({prefix + k: v for k, v in own.items()})
    return part


# ------------------------------------------------------------------ read
def _read(path):
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file.") from None
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as exc:
        raise ModelFileError(f"{path}: not a readable skcrf model file (truncated or "
                             f"corrupted? {exc}).") from None
    try:
        meta = json.loads(arrays.pop("__meta__").tobytes().decode("utf-8"))
    except (KeyError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path}: not an skcrf model file (no readable metadata: "
                             f"{exc}).") from None
    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not an skcrf model file.")
    if meta.get("format_version", 0) > FORMAT_VERSION:
        raise ModelFileError(f"{path}: model format version {meta.get('format_version')} "
                             f"is newer than this skcrf ({__version__}) reads; upgrade.")
    return meta, arrays


class Model:
    """A model file, ready to tag: NumPy and Numba only (no scikit-learn).

    Attributes
    ----------
    kind : {"tagger", "segmenter"}
    labels : list
    meta : dict
    """

    def __init__(self, meta, arrays, path="<model>"):
        try:
            self._build(meta, arrays)
        except (KeyError, ValueError, TypeError, IndexError) as exc:
            raise ModelFileError(f"{path}: inconsistent model file ({exc!r}).") from None

    def _build(self, meta, arrays):
        self.meta = meta
        self.kind = meta["kind"]
        self._build_part(meta, {k: v for k, v in arrays.items() if not k.startswith("oov.")})
        self.segmenter = meta.get("segmenter")
        self.oov = self.known_words = None
        if self.kind == "segmenter" and "oov_model" in meta:
            self.oov = Model.__new__(Model)
            self.oov.kind, self.oov.meta, self.oov.segmenter = "tagger", meta, None
            self.oov.oov = self.oov.known_words = None
            self.oov._build_part(meta["oov_model"], {k[4:]: v for k, v in arrays.items()
                                                     if k.startswith("oov.")})
            data, lengths = arrays["known_words"], arrays["known_word_lengths"]
            if lengths.sum() != data.size:
                raise ValueError("known-word lengths disagree with their text")
            ends = np.cumsum(lengths)
            raw = data.tobytes()
            self.known_words = frozenset(raw[e - n:e].decode("utf-8")
                                         for e, n in zip(ends.tolist(), lengths.tolist()))

    def _build_part(self, meta, arrays):
        self.labels = meta["labels"]
        f = meta["featurizer"]
        self.input_kind, self.n_columns = f["input_kind"], int(f["n_columns"])
        self.n_features = int(f["n_features"])
        templates = []
        for i, state in enumerate(f["templates"]):
            prefix = f"template{i}."
            templates.append(template_from_state(
                state, {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}))
        self.templates = TemplateSet(templates)
        self.vocab_keys = np.ascontiguousarray(arrays["vocab_keys"], dtype=np.uint64)
        self._lookup = self._sorted_vocab = None
        self._numpy_tokens = 0           # tokens tagged by the NumPy path so far
        self.strings = f["strings"]
        self.feature_slots = arrays["feature_slots"]
        self.feature_codes = arrays["feature_codes"]
        self.feature_counts = arrays["feature_counts"]
        L = len(self.labels)
        W = np.zeros((self.n_features, L))
        indptr, indices, data = arrays["W_indptr"], arrays["W_indices"], arrays["W_data"]
        if indptr.size != self.n_features + 1 or self.vocab_keys.size != self.n_features:
            raise ValueError("feature counts disagree")
        rows = np.repeat(np.arange(self.n_features), np.diff(indptr))
        W[rows, indices] = data
        self.weights = Weights.from_arrays(W, arrays["A"], arrays["start"], arrays["end"])
        self.crf_meta = meta["crf"]
        self.featurizer_meta = f
        self.decoding = meta["crf"]["params"].get("decoding", "viterbi")

    def feature_names(self):
        return self.templates.names(self.feature_slots, self.feature_codes, self.strings)

    def arrays(self, X, engine="numba"):
        """Kernel arrays of raw sequences (characters or token tuples).

        ``engine="numpy"`` computes them with NumPy alone (every template
        must have a NumPy version: ``self.templates.has_numpy``)."""
        units = read_units(X, expect_kind=self.input_kind, expect_columns=self.n_columns)
        if engine == "numpy":
            keys = self.templates.keys_numpy(units)
            if self._sorted_vocab is None:
                self._sorted_vocab = _numpy_tagger.SortedVocabulary(self.vocab_keys)
            indptr, indices = self._sorted_vocab.csr(keys)
        else:
            from . import _feature_hashing as H

            if self._lookup is None:
                self._lookup = H.vocabulary_table(self.vocab_keys)
            indptr, indices = H.keys_to_csr(self.templates.keys(units), self._lookup)
        return KernelArrays(indptr, indices, ONE, units.offsets)

    def _split(self, flat, offsets):
        return [flat[offsets[i]:offsets[i + 1]] for i in range(offsets.size - 1)]

    def _engine(self, X, engine, decoding="viterbi"):
        if engine not in ("auto", "numpy", "numba"):
            raise ValueError(f"engine must be 'auto', 'numpy' or 'numba', got {engine!r}.")
        if engine == "numpy" and decoding != "viterbi":
            raise ValueError("engine='numpy' decodes with Viterbi only; this model "
                             f"decodes with {decoding!r}: use engine='numba'.")
        if engine == "numpy" and not self.templates.has_numpy:
            raise ValueError("this model's templates have no NumPy version; "
                             "use engine='numba'.")
        if engine != "auto":
            return engine
        if decoding != "viterbi" or not self.templates.has_numpy:
            return "numba"
        try:
            n_units = sum(map(len, X))
        except TypeError:
            return "numba"
        if self._numpy_tokens + n_units > _numpy_tagger.MAX_TOKENS:
            self._numpy_tokens = _numpy_tagger.MAX_TOKENS + 1     # Numba from now on
            return "numba"
        self._numpy_tokens += n_units
        return "numpy"

    def predict(self, X, n_threads=1, engine="auto"):
        """Label lists of raw sequences.

        ``engine``: ``"numba"`` (the compiled kernels, ``n_threads`` of
        them), ``"numpy"`` (one thread, no Numba: no start-up cost; the
        same labels), or ``"auto"``: NumPy for this model's first
        ``_numpy_tagger.MAX_TOKENS`` units if its templates allow, then
        Numba (which pays its start-up back on more input than that).
        """
        X = list(X)
        if self._engine(X, engine, self.decoding) == "numpy":
            arrays = self.arrays(X, engine="numpy")
            idx, _ = _numpy_tagger.viterbi(arrays, self.weights)
        else:
            from . import _inference as inference

            arrays = self.arrays(X)
            if self.decoding == "marginal":
                P, _ = inference.marginals(arrays, self.weights, n_threads)
                idx = P.argmax(axis=1) if P.size else np.zeros(0, np.int64)
            else:
                idx, _ = inference.viterbi(arrays, self.weights, n_threads)
        return self._split([self.labels[i] for i in idx.tolist()], arrays.offsets)

    def predict_with_probabilities(self, X, n_threads=1, engine="auto"):
        """``(labels, sequence log-probability, marginals)`` per sequence
        (Viterbi labels; ``engine`` as in :meth:`predict`)."""
        X = list(X)
        if self._engine(X, engine) == "numpy":
            arrays = self.arrays(X, engine="numpy")
            idx, score = _numpy_tagger.viterbi(arrays, self.weights)
            P, log_z = _numpy_tagger.marginals(arrays, self.weights)
        else:
            from . import _inference as inference

            arrays = self.arrays(X)
            idx, score = inference.viterbi(arrays, self.weights, n_threads)
            P, log_z = inference.marginals(arrays, self.weights, n_threads)
        labels = [self.labels[i] for i in idx.tolist()]
        off = arrays.offsets
        return [(labels[off[s]:off[s + 1]], float(score[s] - log_z[s]), P[off[s]:off[s + 1]])
                for s in range(off.size - 1)]

    def topk(self, X, k, n_threads=1):
        from . import _inference as inference

        arrays = self.arrays(X)
        k_eff, need = inference.topk_capacity(arrays, len(self.labels), int(k))
        if need > inference.TOPK_MAX_BYTES:
            raise ValueError(f"-n {k} needs about {need / 2**30:.1f} GiB for this block.")
        paths, scores, count = inference.topk(arrays, self.weights, k_eff, n_threads)
        _, log_z = inference.marginals(arrays, self.weights, n_threads)
        off = arrays.offsets
        out = []
        for s in range(off.size - 1):
            out.append([([self.labels[i] for i in paths[off[s]:off[s + 1], q].tolist()],
                         float(scores[s, q] - log_z[s])) for q in range(count[s])])
        return out

    def segment(self, texts, n_threads=1):
        """Word lists of raw sentences (segmenter models), as
        ``WordSegmenter.predict`` gives them (its OOV model included)."""
        from .segmentation import _adopt_all, _join_pieces, _split_pieces, tags_to_words

        pieces, owner = _split_pieces(texts)
        if not pieces:
            return [[] for _ in texts]
        params = self.segmenter or {}
        words = [tags_to_words(p, t) for p, t in zip(pieces, self.predict(pieces, n_threads))]
        if self.oov is not None:
            proposals = [tags_to_words(p, t) for p, t in
                         zip(pieces, self.oov.predict(pieces, n_threads))]
            _adopt_all(words, proposals, self.known_words,
                       lambda need: [P for _, _, P in self.predict_with_probabilities(
                           [pieces[k] for k in need], n_threads)],
                       self.labels, float(params.get("oov_threshold", 0.8)))
        return _join_pieces(words, owner, len(texts), bool(params.get("merge_runs", False)))


def read_model(path):
    """The :class:`Model` in a model file (no scikit-learn imported)."""
    meta, arrays = _read(path)
    return Model(meta, arrays, path)


def load_model(path):
    """The fitted estimator in a model file: a ``Pipeline`` of a
    ``SequenceFeaturizer`` and a ``LinearChainCRF``, or a ``WordSegmenter``.

    Reads plain arrays and JSON only (no code is executed). The
    featurizer's ``dictionary`` and ``unlabeled_text`` parameters are not
    stored (their tables are): set them again before refitting a loaded model.
    """
    from sklearn.pipeline import make_pipeline

    from ._segmenter import WordSegmenter

    meta, arrays = _read(path)
    model = Model(meta, arrays, path)
    feat, crf = _estimators(model)
    if meta["kind"] == "segmenter":
        seg = WordSegmenter(**_known(WordSegmenter, meta["segmenter"]))
        seg.featurizer_, seg.crf_ = feat, crf
        seg.train_words_ = frozenset()
        seg.oov_featurizer_ = seg.oov_crf_ = None
        seg.known_words_ = frozenset()
        if model.oov is not None:
            seg.oov_featurizer_, seg.oov_crf_ = _estimators(model.oov)
            seg.known_words_ = model.known_words
        return seg
    return make_pipeline(feat, crf)


def _estimators(model):
    """The fitted ``SequenceFeaturizer`` and ``LinearChainCRF`` of a model (part)."""
    from ._crf import LinearChainCRF
    from ._featurizer import SequenceFeaturizer

    f = model.featurizer_meta
    feat = SequenceFeaturizer(**_known(SequenceFeaturizer, f["params"]))
    feat.input_kind_, feat.n_columns_ = model.input_kind, model.n_columns
    feat.n_features_out_ = model.n_features
    feat.feature_counts_ = np.asarray(model.feature_counts, dtype=np.int64)
    feat._templates_ = model.templates
    feat._vocab_keys_ = model.vocab_keys
    feat._feature_slots_ = np.asarray(model.feature_slots, dtype=np.int32)
    feat._feature_codes_ = np.asarray(model.feature_codes, dtype=np.int32)
    feat._feature_strings_ = list(model.strings)
    crf = LinearChainCRF(**_known(LinearChainCRF, model.crf_meta["params"]))
    crf.classes_ = np.asarray(model.labels)
    crf.n_features_in_ = model.n_features
    crf.coef_ = model.weights.W.T
    crf.transition_coef_ = model.weights.A
    crf.start_coef_, crf.end_coef_ = model.weights.start, model.weights.end
    for k, v in model.crf_meta["fitted"].items():
        setattr(crf, k, v)
    return feat, crf


def _known(cls, params):
    names = cls._get_param_names()
    return {k: v for k, v in params.items() if k in names and v is not None
            and k not in ("dictionary", "unlabeled_text")}
