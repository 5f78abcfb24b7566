"""A CRFsuite model in memory: CRFsuite's attributes and labels over skcrf's
weights and decoding path.

:class:`CRFsuiteModel` is what ``skcrf.compat.pycrfsuite.Tagger`` opens and
what ``skcrf.compat.CRF`` writes and reads as ``model_filename``: attribute
strings -> ids, labels in CRFsuite's order (of first appearance in
training), dense state weights and transitions (no start / end weights, as
in CRFsuite). Items are turned into attributes by python-crfsuite's rules
(:mod:`._items`); decoding goes through :mod:`skcrf._inference`.
"""

import numpy as np

from .._arrays import KernelArrays, Weights
from .._inference import marginals, path_scores, viterbi
from ..io._crfsuite import read_crfsuite, write_crfsuite
from ._items import item_attributes

__all__ = ["CRFsuiteModel"]


class CRFsuiteModel:
    """Labels, attributes and weights of a CRFsuite model.

    Parameters
    ----------
    labels : list of str
        In CRFsuite's order (label ids).
    attributes : list of str
    W : ndarray of shape (n_attributes, n_labels)
    A : ndarray of shape (n_labels, n_labels)
    """

    def __init__(self, labels, attributes, W, A):
        self.labels = list(labels)
        self.attributes = list(attributes)
        self.attr_id = {a: i for i, a in enumerate(self.attributes)}
        self.label_id = {lab: i for i, lab in enumerate(self.labels)}
        L = len(self.labels)
        self.weights = Weights.from_arrays(W, A, np.zeros(L), np.zeros(L))

    # -------------------------------------------------------------- files
    @classmethod
    def from_bytes(cls, data, name="<crfsuite model>"):
        m = read_crfsuite(data, name)
        L, B = len(m.labels), len(m.attributes)
        W = np.zeros((B, L))
        W[m.state_attr, m.state_label] = m.state_weight
        return cls(m.labels, m.attributes, W, m.transition_matrix())

    def to_bytes(self):
        W, A = self.weights.W, self.weights.A
        a, lab = np.nonzero(W)
        i, j = np.nonzero(A)
        return write_crfsuite(self.labels, self.attributes, (a, lab, W[a, lab]),
                              (i, j, A[i, j]))

    # ------------------------------------------------------------ tagging
    def arrays(self, xseqs):
        """Kernel arrays of item sequences (python-crfsuite's item rules;
        attributes the model does not know are ignored, as CRFsuite does)."""
        indptr, indices, data, lengths = [0], [], [], []
        get = self.attr_id.get
        for xseq in xseqs:
            n = 0
            for item in xseq:
                for attr, v in (item.items() if isinstance(item, _Attributes)
                                else item_attributes(item).items()):
                    k = get(attr)
                    if k is not None:
                        indices.append(k)
                        data.append(v)
                indptr.append(len(indices))
                n += 1
            lengths.append(n)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return KernelArrays(np.asarray(indptr, dtype=np.int64),
                            np.asarray(indices, dtype=np.int32),
                            np.asarray(data, dtype=np.float64), offsets)

    def tag(self, arrays, engine="numpy"):
        """Label index of every token (Viterbi), and each path's score."""
        return viterbi(arrays, self.weights, 1, engine)

    def marginals(self, arrays, engine="numpy"):
        return marginals(arrays, self.weights, 1, engine)

    def path_scores(self, arrays, y):
        return path_scores(arrays, self.weights, y)


class _Attributes(dict):
    """An item already turned into attributes (``ItemSequence``)."""
