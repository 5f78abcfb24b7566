"""skcrf: a scikit-learn compatible linear-chain conditional random field."""

from ._version import __version__

from ._constraints import allowed_transitions, repair_tags
from ._crf import LinearChainCRF
from ._dict_vectorizer import SequenceDictVectorizer
from ._featurizer import SequenceFeaturizer
from ._sequences import Sequences
from .metrics import tags_to_spans

__all__ = ["LinearChainCRF", "SequenceFeaturizer", "SequenceDictVectorizer", "Sequences",
           "allowed_transitions",
           "repair_tags",
           "tags_to_spans", "__version__"]
