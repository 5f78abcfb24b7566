"""A CRFsuite model in memory: CRFsuite's attributes and labels over skcrf's
weights and decoding path.

:class:`CRFsuiteModel` is what ``skcrf.compat.pycrfsuite.Tagger`` opens and
what ``skcrf.compat.CRF`` writes and reads as ``model_filename``: attribute
strings -> ids, labels in CRFsuite's order (of first appearance in
training), dense state weights and transitions (no start / end weights, as
in CRFsuite). Items are turned into attributes by python-crfsuite's rules
(:mod:`._items`); decoding goes through :mod:`skcrf._inference`.
"""

import sys

import numpy as np

from .._arrays import KernelArrays, Weights, aligned_zeros
from .._inference import marginals, path_scores, viterbi, viterbi_sequence, viterbi_table
from ..exceptions import ModelFileError
from ..io._crfsuite import read_crfsuite, write_crfsuite
from ._items import item_attributes

__all__ = ["CRFsuiteModel"]

#: dense weights may take this many times the file's bytes, or this many
#: bytes, whichever is larger (a sparse model of many labels needs more than
#: it stores; a crafted one, far more)
_DENSE_FACTOR = 16
_DENSE_FLOOR = 512 * 2**20
#: as for skcrf's own model files: every decoding array is (tokens x labels)
_MAX_LABELS = 1 << 16


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
        self._table = None          # the compiled single-sequence kernel's transitions
        self._work = None           # the compiled single-sequence kernel's buffers
        self._tagged = 0            # sequences tagged with NumPy so far

    # -------------------------------------------------------------- files
    @classmethod
    def from_bytes(cls, data, name="<crfsuite model>"):
        m = read_crfsuite(data, name)
        L, B = len(m.labels), len(m.attributes)
        # the weights are held dense (attributes x labels, labels x labels): a
        # crafted file of many labels and attributes but few features would
        # ask for far more memory than it holds
        if L > _MAX_LABELS:
            raise ModelFileError(f"{name}: {L:,} labels, more than skcrf decodes "
                                 f"({_MAX_LABELS:,}).")
        need = 8 * (B * L + L * L)
        if need > max(_DENSE_FACTOR * len(data), _DENSE_FLOOR):
            raise ModelFileError(
                f"{name}: {B:,} attributes and {L:,} labels would take {need / 2**20:,.0f} "
                f"MiB as dense weights, more than this {len(data):,}-byte file warrants.")
        W = aligned_zeros((B, L))   # (rows on cache lines: the decoding reads them)
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
                if not (item.__class__ is dict and _flat_attributes(item, get, indices, data)):
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

    def tag(self, arrays, engine="auto"):
        """Label index of every token (Viterbi), and each path's score.

        ``engine="auto"`` tags one short sequence (a ``Tagger.tag`` call)
        with NumPy until Numba is worth loading — when it is already loaded
        in the process, or after :data:`_NUMPY_SEQUENCES` calls — and then
        with the compiled kernel called directly; a batch with the batch
        drivers (NumPy, as ``"numpy"``)."""
        single = arrays.n_sequences == 1 and arrays.n_tokens <= _SHORT
        if engine == "auto":
            if single and (self._tagged >= _NUMPY_SEQUENCES or "numba" in sys.modules):
                if self._table is None:
                    self._table = viterbi_table(self.weights.A)
                labels, score, self._work = viterbi_sequence(arrays, self.weights,
                                                             self._table, self._work)
                return labels, score
            self._tagged += 1
            engine = "numpy"
        if engine == "numpy" and single:
            return _viterbi_one(arrays, self.weights)
        return viterbi(arrays, self.weights, 1, engine)

    def marginals(self, arrays, engine="numpy"):
        return marginals(arrays, self.weights, 1, engine)

    def path_scores(self, arrays, y):
        return path_scores(arrays, self.weights, y)


def _flat_attributes(item, get, indices, data):
    """Append the known attributes of a dict item whose keys are str and
    whose values are str, float, int, bool or such dicts (python-crfsuite's
    common case, nested as ``{"next": {...}}``) to ``indices`` / ``data`` and
    return True; return False, appending nothing, for any other item (the
    general rules of :func:`item_attributes` then apply). An attribute met
    twice in one item appears twice: the kernels add the values of a row's
    repeated columns, as CRFsuite adds them."""
    ks, vs = [], []
    try:
        if not _fast_dict(item, "", get, ks, vs):
            return False
    except TypeError:       # a key that is not str (bytes, a number): the general rules
        return False
    indices.extend(ks)
    data.extend(vs)
    return True


def _fast_dict(item, prefix, get, ks, vs):
    # (hot: one call per item of every Tagger.tag; a non-str key fails the
    # concatenations with a TypeError, which the caller catches)
    add_k, add_v = ks.append, vs.append
    for key, value in item.items():
        cls = type(value)
        if cls is str:
            k, v = get(prefix + key + ":" + value), 1.0
        elif cls is float or cls is int or cls is bool:
            k, v = get(prefix + key), float(value)
        elif cls is dict:
            if not _fast_dict(value, prefix + key + ":", get, ks, vs):
                return False
            continue
        else:
            return False
        if k is not None:
            add_k(k)
            add_v(v)
    return True


#: one sequence up to this many tokens is tagged by :func:`_viterbi_one`
_SHORT = 256

#: single sequences tagged with NumPy before the compiled kernel takes over:
#: importing Numba and loading the kernel (~0.5 s) pays off after a few
#: thousand calls, each ~60 us faster
_NUMPY_SEQUENCES = 5000


def _viterbi_one(arrays, weights):
    """Viterbi for one short sequence with a few NumPy operations per token:
    python-crfsuite's Tagger is called a sequence at a time, where the
    batched NumPy engine's per-call set-up (a vectorised step per feature
    rank) would cost more than the decoding."""
    W, A, start, end = weights
    indptr, indices, data = arrays.indptr, arrays.indices, arrays.data
    T, L = arrays.n_tokens, A.shape[0]
    if T == 0:
        return np.zeros(0, np.int64), np.zeros(1)
    # every token's emission scores at once: the weighted rows of its
    # attributes summed by segment (a zero row ends the last segments)
    rows = np.zeros((indices.size + 1, L))
    np.multiply(W[indices], (data if data.size == indices.size else data[:1])[:, None],
                out=rows[:-1])
    E = np.add.reduceat(rows, indptr[:-1], axis=0)
    empty = indptr[1:] == indptr[:-1]
    if empty.any():
        E[empty] = 0.0          # (reduceat gives the next row for an empty segment)
    back = np.empty((T, L), dtype=np.int64)
    cand = np.empty((L, L))
    score = E[0] + start
    cols = np.arange(L)
    for t in range(1, T):
        np.add(score[:, None], A, out=cand)
        arg = back[t]
        cand.argmax(axis=0, out=arg)
        score = cand[arg, cols]
        score += E[t]
    score += end
    best = int(score.argmax())
    out = np.empty(T, dtype=np.int64)
    out[-1] = best
    for t in range(T - 1, 0, -1):
        best = int(back[t, best])
        out[t - 1] = best
    return out, np.array([score[out[-1]]])


class _Attributes(dict):
    """An item already turned into attributes (``ItemSequence``)."""
