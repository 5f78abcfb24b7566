"""Adjacent pointwise mutual information features (character input).

``log2(N c(ab) / (c(a) c(b)))`` of each character with the one before and
the one after, counted over the training text plus unlabeled text, binned
(floored, clipped, with how often the pair occurs): high inside words, low
across boundaries (Sun & Xu 2011). Jackknifed while fitting (:mod:`._jackknife`).
"""

import numpy as np
from numba import njit

from ._accessor_variety import _bin_key
from ._hashing import _JIT, _finish, _probe, _splitmix, build_lookup_values, new_table
from ._jackknife import _statistics_corpus, _statistics_read
from ._numpy_keys import check_table
from ._templates import MAX_FOLDS, CodedTemplate, _template_id, state_int
from ._units import stable_id, unique_inverse

_PMI_LO, _PMI_HI = -3, 9        # floored PMI clipped to this range

_N_PMI = _PMI_HI - _PMI_LO + 1

_PMI_BINS = 1 + 3 * _N_PMI       # bin 0: a pair the statistics do not have


class AdjacentPMI(CodedTemplate):
    """Binned pointwise mutual information of adjacent characters.

    ``PMI(a, b) = log2(N c(ab) / (c(a) c(b)))`` over the training text plus
    unlabeled text (``N`` characters; counts never across sequences): high
    inside words, low across word boundaries (Sun & Xu 2011 feed it to a
    segmenter). Each position gets two features, the bin of the pair it
    forms with the character before and of the pair with the one after; a
    bin is the floored PMI clipped to [-3, 9] together with how often the
    pair occurs (1, 2-3, 4+), and bin 0 is a pair the statistics do not have.

    With ``folds > 1`` the training features are jackknifed as in
    :class:`AccessorVariety`: a training sentence of fold f reads the
    statistics of all the text but fold f, as new text reads statistics that
    do not contain it.

    Parameters
    ----------
    sequences : list of ndarray
        The training text as code points, one array per sequence.
    texts : list of str
        More (unlabeled) text for the statistics.
    folds : int, default=1
    """

    type_name = "adjacent_pmi"
    n_slots = 2

    def to_state(self):
        return ({"type": self.type_name, "folds": self.folds, "digest": str(self._digest)},
                {"table": self.table})

    @classmethod
    def from_state(cls, state, arrays):
        obj = cls.__new__(cls)
        obj.folds = state_int(state, "folds", 1, MAX_FOLDS)
        obj._digest = state_int(state, "digest", 0, 2**64)
        obj.table = arrays["table"]
        check_table(obj.table, "table", max_value=_PMI_BINS - 1)
        return obj

    def __init__(self, sequences, texts=(), folds=1):
        self.folds = int(folds)
        cps, offsets, seq_fold = _statistics_corpus(sequences, texts, self.folds)
        keys, bins, fold_keys, fold_bins = adjacent_pmi(cps, offsets, seq_fold,
                                                        max(self.folds, 1))
        self.table = new_table(keys.size, width=2)
        build_lookup_values(keys, bins, self.table)
        self._digest = stable_id(f"pmi|{cps.size}|{int(keys[:1000].sum()) if keys.size else 0}")
        if self.folds > 1:                  # for fit_transform only; not saved
            self._fold_table = new_table(fold_keys.size, width=2)
            build_lookup_values(fold_keys, fold_bins, self._fold_table)
            self._n_train = (len(sequences), int(offsets[len(sequences)]))

    def description(self):
        return f"pmi|{self._digest:x}"

    def _tids(self):
        return np.array([_template_id(f"{self.description()}|{k}") for k in range(2)],
                        dtype=np.int64)

    def write_codes(self, units, sources, source_row, codes, fitting=False):
        if units.kind != "chars":
            raise ValueError("adjacent PMI features need character input.")
        fold_table, seq_fold = _statistics_read(self, units, fitting, "PMI")
        _pmi_codes(units.ids[0], units.offsets, seq_fold, self.table, fold_table, codes)

    def code_keys(self):
        """Code ``b + 1``: PMI bin b."""
        keys = np.zeros((2, _PMI_BINS + 1), dtype=np.uint64)
        for k, t in enumerate(self._tids()):
            for b in range(_PMI_BINS):
                keys[k, b + 1] = _bin_key(t, b)
        return keys

    def feature_values(self, units, rows, subs, keys=None):
        if keys is None:
            raise ValueError("PMI features are named from their keys.")
        tids = self._tids()
        bins = {int(_bin_key(tids[k], b)): b for k in range(2) for b in range(_PMI_BINS)}
        return [_pmi_bin_name(bins[int(k)]) for k in keys]

    def name(self, sub, values):
        return f"pmi_{'before' if sub == 0 else 'after'}={values[0]}"


@njit(**_JIT)
def _fold_key(k, f):
    """Key of pair key ``k`` in the leave-fold-``f``-out table."""
    k = _splitmix(k ^ _splitmix(np.uint64(f) + np.uint64(0x9E37)))
    return k if k != np.uint64(0) else np.uint64(1)


def _pmi_bin_name(b):
    if b == 0:
        return "unseen"
    p, c = divmod(b - 1, 3)
    return f"{p + _PMI_LO}|n{('1', '2-3', '4+')[c]}"


@njit(**_JIT)
def _pair_key(a, b):
    return _finish(_splitmix(_splitmix(np.uint64(a) + np.uint64(7)) ^ np.uint64(b)))


@njit(**_JIT)
def _pmi_bin(c_ab, c_a, c_b, n):
    """Bin of a pair seen ``c_ab`` times (0: never) of characters seen c_a, c_b
    times in ``n`` characters."""
    if c_ab <= 0:
        return np.uint64(0)
    pmi = np.log2(np.float64(c_ab) * np.float64(n) / (np.float64(c_a) * np.float64(c_b)))
    p = min(max(np.int64(np.floor(pmi)), _PMI_LO), _PMI_HI) - _PMI_LO
    c = 0 if c_ab < 2 else (1 if c_ab < 4 else 2)
    return np.uint64(1 + 3 * p + c)


def adjacent_pmi(cps, offsets, seq_fold, n_folds):
    """PMI bins of the adjacent character pairs of a corpus.

    Returns ``(keys, bins, fold_keys, fold_bins)``: the pair keys
    (:func:`_pair_key`) with their bins over all the text, and, for every
    pair that occurs in fold f of ``seq_fold`` (-1: text in no fold), the key
    ``_fold_key(pair key, f)`` with its bin over all the text but fold f.
    """
    uniq, uid = unique_inverse(cps)
    uid = uid.reshape(-1).astype(np.int64)
    n_pairs = int(max(0, cps.size - (offsets.size - 1)))
    pairs = new_table(n_pairs, width=4)     # key, count, a, b
    # (pair, fold) entries: key, count, pair key, fold
    fold_pairs = new_table(n_pairs if n_folds > 1 else 0, width=4)
    uni = np.zeros((n_folds + 1, max(uniq.size, 1)), dtype=np.int64)  # row n_folds: all
    _pmi_counts(cps, uid, offsets, seq_fold, n_folds > 1, pairs, fold_pairs, uni)
    return _pmi_bins(pairs, fold_pairs, uni, n_folds)


@njit(**_JIT)
def _pmi_counts(cps, uid, offsets, seq_fold, folded, pairs, fold_pairs, uni):
    n_folds = uni.shape[0] - 1
    for s in range(offsets.size - 1):
        f = seq_fold[s]
        for t in range(offsets[s], offsets[s + 1]):
            uni[n_folds, uid[t]] += 1
            if f >= 0:
                uni[f, uid[t]] += 1
            if t == offsets[s]:
                continue
            k = _pair_key(cps[t - 1], cps[t])
            j = _probe(pairs, k)
            pairs[j, 0] = k
            pairs[j, 1] += np.uint64(1)
            pairs[j, 2] = np.uint64(uid[t - 1])
            pairs[j, 3] = np.uint64(uid[t])
            if folded and f >= 0:
                fk = _fold_key(k, f)
                j = _probe(fold_pairs, fk)
                fold_pairs[j, 0] = fk
                fold_pairs[j, 1] += np.uint64(1)
                fold_pairs[j, 2] = k
                fold_pairs[j, 3] = np.uint64(f)


@njit(**_JIT)
def _pmi_bins(pairs, fold_pairs, uni, n_folds):
    total = uni[n_folds].sum()
    fold_n = np.zeros(n_folds, dtype=np.int64)
    for f in range(n_folds):
        fold_n[f] = uni[f].sum()
    keys = np.empty(pairs.shape[0], dtype=np.uint64)
    bins = np.empty(pairs.shape[0], dtype=np.uint64)
    m = 0
    for j in range(pairs.shape[0]):
        if pairs[j, 0] != np.uint64(0):
            a, b = np.int64(pairs[j, 2]), np.int64(pairs[j, 3])
            keys[m] = pairs[j, 0]
            bins[m] = _pmi_bin(np.int64(pairs[j, 1]), uni[n_folds, a], uni[n_folds, b],
                               total)
            m += 1
    fkeys = np.empty(fold_pairs.shape[0], dtype=np.uint64)
    fbins = np.empty(fold_pairs.shape[0], dtype=np.uint64)
    q = 0
    for j in range(fold_pairs.shape[0]):
        if fold_pairs[j, 0] == np.uint64(0):
            continue
        i = _probe(pairs, fold_pairs[j, 2])
        a, b = np.int64(pairs[i, 2]), np.int64(pairs[i, 3])
        f = np.int64(fold_pairs[j, 3])
        fkeys[q] = fold_pairs[j, 0]
        fbins[q] = _pmi_bin(np.int64(pairs[i, 1]) - np.int64(fold_pairs[j, 1]),
                            uni[n_folds, a] - uni[f, a], uni[n_folds, b] - uni[f, b],
                            total - fold_n[f])
        q += 1
    return keys[:m].copy(), bins[:m].copy(), fkeys[:q].copy(), fbins[:q].copy()


@njit(**_JIT)
def _pmi_codes(cps, offsets, seq_fold, table, fold_table, codes):
    """Codes (bin + 1) of slot 0: the bin of the pair (t - 1, t); slot 1: of
    (t, t + 1). A sequence of fold ``seq_fold[s] >= 0`` reads ``fold_table``."""
    for s in range(offsets.size - 1):
        f = seq_fold[s]
        for t in range(offsets[s] + 1, offsets[s + 1]):
            k = _pair_key(cps[t - 1], cps[t])
            if f >= 0:
                fk = _fold_key(k, f)
                j = _probe(fold_table, fk)
                bn = np.int64(fold_table[j, 1]) if fold_table[j, 0] == fk else 0
            else:
                j = _probe(table, k)
                bn = np.int64(table[j, 1]) if table[j, 0] == k else 0
            codes[t, 0] = bn + 1
            codes[t - 1, 1] = bn + 1
