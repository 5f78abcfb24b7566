"""Every model-file format skcrf reads and writes, behind one pair of
functions: :func:`load_model` and :func:`save_model`.

A front-end: it tells the formats apart by their first bytes and hands the
file to the layer that owns the format — skcrf's own files to
:mod:`skcrf.io` (NumPy arrays and JSON), CRFsuite's ``crf1d`` files to
:mod:`skcrf.compat` (whose ``CRF`` is sklearn-crfsuite's estimator, the
natural home of a CRFsuite model). Nothing is unpickled or executed: each
reader checks every offset and size against the file before using it.
"""

import os

from .exceptions import ModelFileError

__all__ = ["load_model", "save_model", "model_format", "FORMATS"]

#: the formats save_model writes
FORMATS = ("skcrf", "crfsuite")

# CRFsuite and CRF++ files are read into memory whole: refuse absurd sizes first
_MAX_MODEL_BYTES = 2 ** 32


def model_format(path):
    """``"skcrf"``, ``"crfsuite"``, ``"crfpp"`` or None: the format of the
    model file at ``path``, from its first bytes."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file.") from None
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read ({exc.strerror or exc}).") from None
    if head.startswith(b"PK\x03\x04"):
        return "skcrf"
    if head.startswith(b"lCRF"):
        return "crfsuite"
    if head.startswith(b"version: ") or head.startswith(b"d\x00\x00\x00"):
        return "crfpp"
    return None


def load_model(path):
    """The fitted model in a model file, whatever wrote it.

    - an skcrf model file (:func:`save_model`): a ``Pipeline`` of a
      ``SequenceFeaturizer`` and a ``LinearChainCRF``, or a ``WordSegmenter``;
    - a CRFsuite model file (written by CRFsuite, python-crfsuite,
      sklearn-crfsuite or ``save_model(..., format="crfsuite")``): a fitted
      :class:`skcrf.compat.CRF`, which predicts from feature dicts as
      sklearn-crfsuite does (``predict``, ``predict_marginals``,
      ``predict_topk``) and shows ``state_features_`` /
      ``transition_features_``;
    - a CRF++ model file (``crf_learn``'s binary or ``-t`` text form): a
      :class:`~skcrf.io._crfpp_model.CRFppModel`, which tags column data as
      ``crf_test`` does (``predict``, ``predict_marginals``, ``topk``).

    Reads plain arrays, JSON and CRFsuite's binary tables only; nothing in a
    file is executed. A file that is none of these, or malformed, raises
    :class:`~skcrf.exceptions.ModelFileError` naming the file and the fault.
    """
    fmt = model_format(path)
    if fmt == "crfsuite":
        from .compat import CRF

        size = os.path.getsize(path)
        if size > _MAX_MODEL_BYTES:
            raise ModelFileError(f"{path}: a CRFsuite model file of {size:,} bytes, more "
                                 "than skcrf reads (4 GiB).")
        with open(path, "rb") as fh:
            return CRF.from_crfsuite(fh.read(), str(path))
    if fmt == "crfpp":
        return read_crfpp_file(path)
    from .io._estimators import load_model as load_skcrf

    return load_skcrf(path)


def read_crfpp_file(path):
    """The :class:`~skcrf.io._crfpp_model.CRFppModel` of a CRF++ model file."""
    from .io._crfpp_model import read_crfpp

    size = os.path.getsize(path)
    if size > _MAX_MODEL_BYTES:
        raise ModelFileError(f"{path}: a CRF++ model file of {size:,} bytes, more than "
                             "skcrf reads (4 GiB).")
    with open(path, "rb") as fh:
        return read_crfpp(fh.read(), str(path))


def save_model(estimator, path, format="skcrf"):
    """Write a fitted model to ``path``.

    Parameters
    ----------
    estimator : estimator
        ``format="skcrf"``: a fitted ``Pipeline(SequenceFeaturizer,
        LinearChainCRF)`` or ``WordSegmenter``. ``format="crfsuite"``: a
        fitted :class:`skcrf.compat.CRF` (or one loaded from a CRFsuite
        file), or a ``Pipeline(SequenceDictVectorizer, LinearChainCRF)``
        fitted with ``start_end_transitions=False`` and no constraints (a
        CRFsuite model has neither start / end weights nor forbidden
        transitions).
    path : str or path-like
    format : {"skcrf", "crfsuite"}, default="skcrf"
        ``"crfsuite"`` writes CRFsuite's ``crf1d`` format, which CRFsuite
        itself and every binding of it (python-crfsuite's ``Tagger``, ...)
        open and tag with identically.

    Returns
    -------
    path
    """
    if format == "skcrf":
        from .io._estimators import save_model as save_skcrf

        return save_skcrf(estimator, path)
    if format != "crfsuite":
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}.")
    data = _crfsuite_bytes(estimator)
    from .io._model_file import write_bytes_atomically

    write_bytes_atomically(path, data)
    return path


def _crfsuite_bytes(estimator):
    from sklearn.pipeline import Pipeline
    from sklearn.utils.validation import check_is_fitted

    from ._crf import LinearChainCRF
    from .compat import CRF
    from .compat._crfsuite_train import to_crfsuite_model
    from .feature_extraction import SequenceDictVectorizer

    if isinstance(estimator, CRF):
        if not estimator._has_model():
            raise ValueError("save_model: this CRF is not fitted yet.")
        return estimator._crfsuite_bytes()
    if (isinstance(estimator, Pipeline) and len(estimator.steps) == 2
            and isinstance(estimator[0], SequenceDictVectorizer)
            and isinstance(estimator[-1], LinearChainCRF)):
        vec, crf = estimator[0], estimator[-1]
        check_is_fitted(vec)
        check_is_fitted(crf)
        return to_crfsuite_model(vec, crf, list(crf.classes_)).to_bytes()
    raise TypeError("save_model(format='crfsuite') takes a fitted skcrf.compat.CRF or "
                    "Pipeline(SequenceDictVectorizer, LinearChainCRF); got "
                    f"{type(estimator).__name__} (a SequenceFeaturizer's features have no "
                    "attribute names CRFsuite could store).")
