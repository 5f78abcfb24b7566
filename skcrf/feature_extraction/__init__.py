"""Feature extraction: raw sequences in, :class:`~skcrf.Sequences` out.

Owns the featurizers (:class:`SequenceFeaturizer`: templates over
characters or token columns; :class:`SequenceDictVectorizer`: per-token
feature dicts), their one piece of fitted state
(:class:`FittedVocabulary`), the templates (window templates, CRF++
templates, and the Chinese word-segmentation features: dictionary matches,
accessor variety, adjacent PMI, character classes) and the compiled kernels
that hash template instances into feature keys (``_hashing``,
``_indexing``, ``_window_keys``, beside the templates that use them).

May import: :mod:`skcrf._kernels` is not needed here; the base modules
(``skcrf._arrays``, ``_sequences``, ``_persistence``, ``_sklearn_compat``,
``exceptions``). Never the estimator, training, segmentation, io, the
command line or Dask. The modules the model files' runtime uses
(``_units``, ``_sources``, ``_char_classes``, ``_templates``,
``_template_set``, ``_vocabulary``, ``_numpy_keys``, ``_crfpp``) import NumPy
only; Numba kernels load on first use.
"""

from .._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "SequenceFeaturizer": "._featurizer",
    "SequenceDictVectorizer": "._dict_vectorizer",
    "FittedVocabulary": "._vocabulary",
    "char_type": "._char_classes",
    "word_shape": "._char_classes",
    "cws_class": "._char_classes",
    "parse_template": "._crfpp",
})
