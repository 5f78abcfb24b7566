"""skcrf: a scikit-learn compatible linear-chain conditional random field."""

__version__ = "0.1.0"

from ._crf import LinearChainCRF
from ._sequences import Sequences

__all__ = ["LinearChainCRF", "Sequences", "__version__"]
