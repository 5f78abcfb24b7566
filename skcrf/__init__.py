"""skcrf: a scikit-learn compatible linear-chain conditional random field.

Public names are imported on first use, so that ``import skcrf`` (and the
``skcrf`` command line, which needs neither SciPy nor scikit-learn to tag)
starts fast.
"""

from ._lazy import lazy_exports
from ._version import __version__

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "LinearChainCRF": "._crf",
    "SequenceFeaturizer": ".feature_extraction._featurizer",
    "SequenceDictVectorizer": ".feature_extraction._dict_vectorizer",
    "Sequences": "._sequences",
    "WordSegmenter": ".segmentation._segmenter",
    "allowed_transitions": "._constraints",
    "repair_tags": "._constraints",
    "tags_to_spans": ".metrics",
    "load_model": "._formats",
    "save_model": "._formats",
    "read_model": ".io._model",
    "ModelFileError": ".exceptions",
    "SkcrfVersionWarning": ".exceptions",
})
__all__ = __all__ + ["__version__"]
