"""skcrf: a scikit-learn compatible linear-chain conditional random field."""

__version__ = "0.1.0"

from ._crf import LinearChainCRF
from ._featurizer import SequenceFeaturizer
from ._sequences import Sequences
from .metrics import tags_to_spans

__all__ = ["LinearChainCRF", "SequenceFeaturizer", "Sequences", "tags_to_spans",
           "__version__"]
