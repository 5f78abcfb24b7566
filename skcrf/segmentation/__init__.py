"""Chinese word segmentation: raw text in, word lists out.

Owns :class:`WordSegmenter` (a :class:`~skcrf.SequenceFeaturizer` and a
:class:`~skcrf.LinearChainCRF` behind a words-in, words-out interface, with a
second character model for new words), the conversion between words and
character tags (BMES, BB2B3MES, BI), the rule that adopts new words
(:func:`adopt_new_words`), the one segmentation path that estimators and model
files share (``_segment``), and reading segmented text.

May import: the estimator layer (``skcrf._crf``), :mod:`skcrf.feature_extraction`,
:mod:`skcrf.metrics` and the base modules; never :mod:`skcrf.io`, the command
line or Dask. ``_tags``, ``_new_words`` and ``_segment`` import NumPy at most
(the model files' runtime segments with them).
"""

from .._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "WordSegmenter": "._segmenter",
    "SCHEMES": "._tags",
    "words_to_tags": "._tags",
    "tags_to_words": "._tags",
    "merge_runs": "._tags",
    "read_segmented": "._tags",
    "word_start_proba": "._new_words",
    "adopt_new_words": "._new_words",
})
