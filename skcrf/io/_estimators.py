"""Model files <-> fitted estimators: :func:`save_model` and :func:`load_model`.

The scikit-learn side of :mod:`skcrf.io`: what a fitted pipeline or
:class:`~skcrf.WordSegmenter` puts in a model file, and the estimators a
model file gives back (their fitted state rebuilt from the file's arrays,
their parameters from its JSON: only the parameters each class has, only
the fitted attributes listed in :data:`CRF_FITTED`).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.validation import check_is_fitted

from .._crf import LinearChainCRF
from .._version import __version__
from ..feature_extraction._featurizer import SequenceFeaturizer
from ..segmentation._segmenter import WordSegmenter
from ._model import Model
from ._model_file import FORMAT, read_model_file, write_model_file

__all__ = ["save_model", "load_model", "CRF_FITTED"]

#: the LinearChainCRF attributes a model file records besides its weights:
#: the only ones loading sets (an allow-list)
CRF_FITTED = ("n_iter_", "objective_", "stop_reason_", "n_params_", "n_nonzero_")

#: parameters that may hold data (a word list, raw text) rather than a
#: setting: stored only when they are a setting (None, or a name such as
#: ``dictionary="train"``): their statistics and tables are in the file
_DATA_PARAMS = ("dictionary", "unlabeled_text")


def save_model(estimator, path):
    """Write a fitted ``Pipeline(SequenceFeaturizer, LinearChainCRF)`` or
    ``WordSegmenter`` to ``path``: plain arrays and JSON, safe to open
    (see :mod:`skcrf.io._model_file` for the format).

    Returns
    -------
    path
    """
    # version 1 unless the file holds what a version-1 reader would ignore
    meta = {"format": FORMAT, "format_version": 1, "skcrf_version": __version__}
    arrays = {}
    if isinstance(estimator, WordSegmenter):
        check_is_fitted(estimator)
        meta["kind"] = "segmenter"
        meta["segmenter"] = _params(estimator)
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
    return write_model_file(path, meta, arrays)


def _params(estimator):
    """The JSON-able parameters of an estimator, without the data ones.
    ``None`` stays ``None`` (a parameter set to None is a setting)."""
    return {k: v for k, v in estimator.get_params(deep=False).items()
            if _json_able(v) and (k not in _DATA_PARAMS or _is_setting(v))}


def _is_setting(v):
    return v is None or isinstance(v, str)


def _json_able(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_json_able(x) for x in v)
    return False


def _write_part(feat, crf, prefix, arrays):
    """The metadata of one fitted featurizer + CRF; its arrays go into
    ``arrays`` under ``prefix``."""
    check_is_fitted(feat)
    check_is_fitted(crf)
    part = {"labels": crf.classes_.tolist()}
    part["crf"] = {"params": _params(crf),
                   "fitted": {k: getattr(crf, k) for k in CRF_FITTED if hasattr(crf, k)}}
    W = sp.csr_matrix(np.ascontiguousarray(crf.coef_.T))
    own = dict(W_data=W.data, W_indices=W.indices.astype(np.int64),
               W_indptr=W.indptr.astype(np.int64), A=crf.transition_coef_,
               start=crf.start_coef_, end=crf.end_coef_)
    vocab_meta, vocab_arrays = feat._vocabulary_.to_state()
    part["featurizer"] = dict(vocab_meta, params=_params(feat))
    own.update(vocab_arrays)
    arrays.update({prefix + k: v for k, v in own.items()})
    return part


def load_model(path):
    """The fitted estimator in a model file: a ``Pipeline`` of a
    ``SequenceFeaturizer`` and a ``LinearChainCRF``, or a ``WordSegmenter``.

    Reads plain arrays and JSON only (no code is executed; see
    :func:`skcrf.io.read_model`). The featurizer's ``dictionary`` and
    ``unlabeled_text`` parameters are not stored (their tables are): set them
    again before refitting a loaded model.
    """
    meta, arrays, declared = read_model_file(path)
    model = Model(meta, arrays, path, declared)
    feat, crf = _estimators(model)
    if model.kind == "segmenter":
        seg = WordSegmenter(**_known(WordSegmenter, meta.get("segmenter") or {}))
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
    feat = SequenceFeaturizer(**_known(SequenceFeaturizer, model.featurizer_meta["params"]))
    feat._vocabulary_ = model.vocabulary
    crf = LinearChainCRF(**_known(LinearChainCRF, model.crf_meta["params"]))
    crf.classes_ = np.asarray(model.labels)
    crf.n_features_in_ = model.n_features
    crf.coef_ = model.weights.W.T
    crf.transition_coef_ = model.weights.A
    crf.start_coef_, crf.end_coef_ = model.weights.start, model.weights.end
    fitted = model.crf_meta.get("fitted", {})
    for k in CRF_FITTED:
        if k in fitted:
            setattr(crf, k, fitted[k])
    # as fit does: the first predict after loading is then as fast as the next
    crf._load_decoding_kernels()
    return feat, crf


def _known(cls, params):
    """The parameters of ``cls`` among ``params`` (others are ignored), as
    lists turned back into tuples where the default is a tuple (JSON has no
    tuples). Files of skcrf 0.1.0 stored an unset or unstorable parameter as
    None; a None where the default is not None is read as the default."""
    names = cls._get_param_names()
    defaults = cls().get_params(deep=False)
    out = {}
    for k, v in params.items():
        if k not in names or (k in _DATA_PARAMS and not _is_setting(v)):
            continue
        if v is None and defaults[k] is not None and not _none_allowed(cls, k):
            continue
        if isinstance(v, list) and isinstance(defaults[k], tuple):
            v = _tuples(v)
        out[k] = v
    return out


def _none_allowed(cls, name):
    return None in cls._parameter_constraints.get(name, ())


def _tuples(v):
    return tuple(_tuples(x) if isinstance(x, list) else x for x in v)
