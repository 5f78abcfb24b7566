"""skcrf: a scikit-learn compatible linear-chain conditional random field.

Public names are imported on first use, so that ``import skcrf`` (and the
``skcrf`` command line, which needs neither SciPy nor scikit-learn to tag)
starts fast.
"""

from importlib import import_module

from ._version import __version__

_LAZY = {
    "LinearChainCRF": "._crf",
    "SequenceFeaturizer": "._featurizer",
    "SequenceDictVectorizer": "._dict_vectorizer",
    "Sequences": "._sequences",
    "WordSegmenter": "._segmenter",
    "allowed_transitions": "._constraints",
    "repair_tags": "._constraints",
    "tags_to_spans": ".metrics",
    "load_model": "._model_io",
    "save_model": "._model_io",
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'skcrf' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
