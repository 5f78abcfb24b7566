"""Coming from sklearn-crfsuite: change the import, keep the code.

>>> import skcrf.compat as sklearn_crfsuite            # was: import sklearn_crfsuite
>>> from skcrf.compat import metrics, scorers          # was: from sklearn_crfsuite import ...
>>> crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100,
...                            all_possible_transitions=True)

:class:`CRF` takes sklearn-crfsuite's constructor and feature dicts; ``metrics``
and ``scorers`` are sklearn-crfsuite's token-level ("flat") metrics and scorers.
"""

from ..compat import metrics, scorers
from ._crf import CRF, TrainingLog

__all__ = ["CRF", "TrainingLog", "metrics", "scorers"]
