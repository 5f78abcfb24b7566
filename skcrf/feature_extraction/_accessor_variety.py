"""Accessor-variety statistics of a corpus, counted in cache-sized buckets.

The accessor variety (AV) of an n-gram is the smaller of its numbers of
distinct left and right neighbours in a corpus (every sequence start and end
counting as a distinct neighbour each time; Feng et al. 2004). Counting it
with one hash table for the whole corpus is a random memory access per
occurrence into tables far larger than the caches. Here the occurrences of
each n are first partitioned by the top bits of their n-gram key into
buckets of a few thousand (a counting sort: two sequential passes), so that
every occurrence of an n-gram lands in the same bucket; each bucket is then
counted with small tables that stay in the cache.

The same pass gives the bin that each training position reads, so that
``fit_transform`` needs no look-up at all; with jackknife folds that is the
AV over all the text but the position's fold (a neighbour that only fold f
has, and every boundary occurrence in f, is lost without f).
"""

import numpy as np
from numba import njit

from ._hashing import (
    _JIT,
    _finish,
    _probe,
    _splitmix,
    _step,
    bucket_bounds,
    build_lookup_values,
    new_table,
    pow2_at_least,
)
from ._jackknife import _fit_state, _statistics_corpus
from ._numpy_keys import check_table
from ._templates import MAX_FOLDS, CodedTemplate, _template_id, state_int
from ._units import stable_id

__all__ = ["AccessorVariety", "accessor_variety_stats", "ngram_key", "av_bin"]

_SEED = np.uint64(0x12345)
_BUCKET_OCCURRENCES = 1024        # the mean bucket (its tables stay in L1/L2)


@njit(**_JIT)
def ngram_key(cps, i, n):
    """Hash key of the n-gram at ``cps[i:i + n]`` (never 0)."""
    h = _SEED
    for p in range(i, i + n):
        h = _step(h, cps[p])
    return _finish_ngram(h, n)


@njit(**_JIT)
def _finish_ngram(h, n):
    h = h ^ np.uint64(n)
    return h if h != np.uint64(0) else np.uint64(1)


@njit(**_JIT)
def av_bin(av, n_bins):
    """``floor(log2(av))`` capped at ``n_bins - 1``; 0 for av <= 1."""
    b = 0
    while av > 1 and b < n_bins - 1:
        av >>= 1
        b += 1
    return b


def accessor_variety_stats(cps, offsets, max_n, seq_fold, n_bins, n_bin_rows, min_av=0):
    """AV of every n-gram (1 < n <= ``max_n``) of a corpus.

    Returns ``(keys, av, bins)``: the key (:func:`ngram_key`) and AV of every
    distinct n-gram whose AV is at least ``min_av``, and ``bins``
    (``n_bin_rows``, max_n - 1) uint8, the bin the n-gram of length n starting
    at each of the first ``n_bin_rows`` positions reads: with folds
    (``seq_fold``: the fold of each sequence, -1 for text in no fold; all -1:
    no folds), the AV over all the text but the position's fold; 0 where no
    n-gram starts.
    """
    n_folds = int(seq_fold.max()) + 1 if seq_fold.size and seq_fold.max() >= 0 else 0
    hcur = _unigram_hashes(cps)           # rolling hash of the n-gram at each position
    bins = np.zeros((n_bin_rows, max(max_n - 1, 0)), dtype=np.uint8)
    # work space, sized for the most occurrences (n = 2) and reused
    n_occ = int((np.diff(offsets) - 1).clip(0).sum())
    occ = _occurrence_arrays(n_occ)
    by_bucket = _occurrence_arrays(n_occ)
    # the n-grams of every n, written one n after another (pages never
    # written are never touched)
    keys = np.empty(max(max_n - 1, 0) * n_occ, dtype=np.uint64)
    av = np.empty(keys.size, dtype=np.int64)
    n_keys = 0
    for n in range(2, max_n + 1):
        m = _ngrams(cps, offsets, seq_fold, n, hcur, *occ)
        if m == 0:
            continue
        # the occurrences in buckets of the top bits of their n-gram key
        start = _bucket_sort(*occ, m, _BUCKET_OCCURRENCES, *by_bucket)
        biggest = int(np.diff(start).max())
        n_keys = _count_buckets(*(a[:m] for a in by_bucket), start, n, n_bins, n_folds,
                                pow2_at_least(2 * biggest), pow2_at_least(4 * biggest),
                                bins, min_av, keys, av, n_keys)
    return keys[:n_keys], av[:n_keys], bins


def _occurrence_arrays(n):
    """Work space for n occurrences: n-gram key, left and right neighbour,
    fold, position."""
    return (np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int32),
            np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32),
            np.empty(n, dtype=np.int64))


@njit(**_JIT)
def _bucket_sort(g, left, right, fold, pos, m, per_bucket, og, oleft, oright, ofold, opos):
    """The first m occurrences counting-sorted (stable) by the top bits of
    their n-gram key into buckets of about ``per_bucket`` (at least 16
    buckets), written to the ``o*`` arrays in one pass; returns the bucket
    bounds. (One scattered write per array instead of a sort order and a
    gather per array.)"""
    start, shift = bucket_bounds(g, m, per_bucket)
    fill = start[:-1].copy()
    for j in range(m):
        b = np.int64(g[j] >> shift)
        q = fill[b]
        fill[b] = q + 1
        og[q] = g[j]
        oleft[q] = left[j]
        oright[q] = right[j]
        ofold[q] = fold[j]
        opos[q] = pos[j]
    return start


@njit(**_JIT)
def _unigram_hashes(cps):
    h = np.empty(cps.size, dtype=np.uint64)
    for i in range(cps.size):
        h[i] = _step(_SEED, cps[i])
    return h


@njit(**_JIT)
def _ngrams(cps, offsets, seq_fold, n, hcur, g, left, right, fold, pos):
    """The n-gram occurrences of the corpus (``hcur[i]``: the rolling hash of
    the (n - 1)-gram at i, advanced here to the n-gram). Returns how many."""
    m = 0
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        f = seq_fold[s]
        for i in range(a, b - n + 1):
            h = _step(hcur[i], cps[i + n - 1])
            hcur[i] = h
            g[m] = _finish_ngram(h, n)
            left[m] = np.int32(cps[i - 1]) if i > a else np.int32(-1)
            right[m] = np.int32(cps[i + n]) if i + n < b else np.int32(-1)
            fold[m] = np.int32(f)
            pos[m] = i
            m += 1
    return m


_MULTI = np.int64(-2)     # a neighbour seen in two folds or more, or in text of no fold
_FIB = np.uint64(0x9E3779B97F4A7C15)


@njit(**_JIT)
def _find(tab, shift, mask, k):
    """Row of key ``k`` (never 0) in a small table whose column 0 holds the
    keys (0: empty), probed linearly from the top bits of k times the golden
    ratio (``shift``: 64 - log2 of the row count)."""
    i = np.int64((np.uint64(k) * _FIB) >> shift)
    while tab[i, 0] != 0 and tab[i, 0] != k:
        i = (i + 1) & mask
    return i


@njit(**_JIT)
def _bits_at_least(n):
    """Bits of a table with at least n rows (and at least 16: see
    :func:`~skcrf.feature_extraction._hashing.pow2_at_least`)."""
    b = 4
    while (1 << b) < n:
        b += 1
    return b


@njit(**_JIT)
def _count_buckets(pg, pleft, pright, pfold, ppos, start, n, n_bins, n_folds, gsize, psize,
                   bins, min_av, keys, av, n_keys):
    """Count every bucket (``start``: bounds) of the n-gram occurrences; the key
    and AV of every n-gram with AV >= ``min_av`` written to ``keys`` and ``av``
    from ``n_keys`` on, the bin each position reads to ``bins[:, n - 2]``.
    Returns the new count.

    Within a bucket the n-grams are numbered (q, in order of first occurrence)
    through a table of ``gsize`` rows; their counts live in arrays indexed by
    q. The distinct (n-gram, neighbour) pairs go through a table of ``psize``
    rows keyed by one integer, ``(q + 1) << 32 | 1 + 2 * neighbour + side``,
    marked with the one fold they were seen in (or ``_MULTI``). With
    ``n_folds`` folds (0: none), the neighbours that only fold f has are
    counted at ``q * n_folds + f`` of two arrays — direct indexing instead of
    a third hash table."""
    folded = n_folds > 0
    nf = max(n_folds, 1)
    most = gsize // 2                                   # n-grams of the biggest bucket, at most
    table = np.zeros((gsize, 2), dtype=np.uint64)       # n-gram key | its number q
    gkey = np.empty(most, dtype=np.uint64)
    lcount = np.empty(most, dtype=np.int64)             # distinct left neighbours
    rcount = np.empty(most, dtype=np.int64)             # distinct right neighbours
    n_occ = np.empty(most, dtype=np.int64)
    used_g = np.empty(most, dtype=np.int64)             # table rows in use
    pairs = np.zeros((psize, 2), dtype=np.int64)        # pair key | fold + 1, or _MULTI
    used_p = np.empty(psize, dtype=np.int64)
    sleft = np.zeros(most * nf if folded else 0, dtype=np.int32)
    sright = np.zeros(most * nf if folded else 0, dtype=np.int32)
    num_of = np.empty(most, dtype=np.int64)             # q of each occurrence
    for b in range(start.size - 1):
        lo, hi = start[b], start[b + 1]
        cnt = hi - lo
        if cnt == 0:
            continue
        gbits, pbits = _bits_at_least(2 * cnt), _bits_at_least(4 * cnt)
        ng = _number_ngrams(pg, lo, hi, table, np.uint64(64 - gbits), (1 << gbits) - 1,
                            used_g, gkey, lcount, rcount, n_occ, num_of)
        npairs = _count_neighbours(pleft, pright, pfold, lo, hi, num_of, n_occ, lcount,
                                   rcount, pairs, np.uint64(64 - pbits), (1 << pbits) - 1,
                                   used_p)
        for q in range(ng):
            a = min(lcount[q], rcount[q])
            if a >= min_av:
                keys[n_keys] = gkey[q]
                av[n_keys] = a
                n_keys += 1
        if folded:
            _fold_only_counts(pleft, pright, pfold, lo, hi, num_of, lcount, rcount, pairs,
                              used_p, npairs, nf, sleft, sright)
        _write_bins(pfold, ppos, lo, hi, num_of, n_occ, lcount, rcount, folded, nf, sleft,
                    sright, n_bins, bins, n - 2)
        for x in range(ng):                     # clear what this bucket used
            table[used_g[x], 0] = 0
        for x in range(npairs):
            pairs[used_p[x], 0] = 0
        if folded:
            sleft[:ng * nf] = 0
            sright[:ng * nf] = 0
    return n_keys


@njit(inline="always", **_JIT)
def _number_ngrams(pg, lo, hi, table, gsh, gm, used_g, gkey, lcount, rcount, n_occ, num_of):
    """Number the n-grams of occurrences ``lo..hi-1`` of a bucket (q, in order
    of first occurrence), counting their occurrences; returns how many."""
    ng = 0
    for j in range(lo, hi):
        g = pg[j]
        r = _find(table, gsh, gm, g)
        if table[r, 0] == 0:
            table[r, 0] = g
            table[r, 1] = ng
            used_g[ng] = r
            gkey[ng] = g
            lcount[ng] = 0
            rcount[ng] = 0
            n_occ[ng] = 0
            ng += 1
        q = np.int64(table[r, 1])
        num_of[j - lo] = q
        n_occ[q] += 1
    return ng


@njit(inline="always", **_JIT)
def _count_neighbours(pleft, pright, pfold, lo, hi, num_of, n_occ, lcount, rcount, pairs,
                      psh, pm, used_p):
    """Count each n-gram's distinct left and right neighbours over a bucket;
    returns how many (n-gram, neighbour) pairs it used."""
    npairs = 0
    for j in range(lo, hi):
        q = num_of[j - lo]
        if n_occ[q] == 1:       # one occurrence: one neighbour on each side
            lcount[q] = 1
            rcount[q] = 1
            continue
        f = np.int64(pfold[j])
        mark = f + 1 if f >= 0 else _MULTI
        # each side's neighbour c (< 0: a sequence boundary, always new):
        # a new (n-gram, neighbour) pair counts; one seen in a second
        # fold is marked _MULTI
        for side in range(2):
            c = np.int64(pleft[j] if side == 0 else pright[j])
            count = lcount if side == 0 else rcount
            if c < 0:
                count[q] += 1
                continue
            k = ((q + 1) << 32) | (1 + side + 2 * c)
            p = _find(pairs, psh, pm, k)
            if pairs[p, 0] == 0:
                pairs[p, 0] = k
                pairs[p, 1] = mark
                used_p[npairs] = p
                npairs += 1
                count[q] += 1
            elif pairs[p, 1] != _MULTI and pairs[p, 1] != mark:
                pairs[p, 1] = _MULTI
    return npairs


@njit(inline="always", **_JIT)
def _fold_only_counts(pleft, pright, pfold, lo, hi, num_of, lcount, rcount, pairs, used_p,
                      npairs, nf, sleft, sright):
    """What each fold alone has: its single-fold neighbours, its boundaries."""
    for x in range(npairs):
        p = used_p[x]
        k = pairs[p, 0]
        q = (k >> 32) - 1
        m = pairs[p, 1]
        if m != _MULTI and min(lcount[q], rcount[q]) >= 2:
            if k & 1:
                sleft[q * nf + m - 1] += 1
            else:
                sright[q * nf + m - 1] += 1
    for j in range(lo, hi):
        f = np.int64(pfold[j])
        q = num_of[j - lo]
        if f < 0 or min(lcount[q], rcount[q]) < 2:
            continue
        if pleft[j] < 0:
            sleft[q * nf + f] += 1
        if pright[j] < 0:
            sright[q * nf + f] += 1


@njit(inline="always", **_JIT)
def _write_bins(pfold, ppos, lo, hi, num_of, n_occ, lcount, rcount, folded, nf, sleft, sright,
                n_bins, bins, bin_col):
    """The bin each position of the bucket reads (without its own fold's
    neighbours when jackknifed)."""
    for j in range(lo, hi):
        i = ppos[j]
        q = num_of[j - lo]
        if i >= bins.shape[0] or n_occ[q] == 1:     # AV 1: bin 0
            continue
        left, right = lcount[q], rcount[q]
        f = np.int64(pfold[j])
        if folded and f >= 0 and min(left, right) >= 2:
            left -= sleft[q * nf + f]
            right -= sright[q * nf + f]
        bins[i, bin_col] = av_bin(min(left, right), n_bins)


# ------------------------------------------------------------------ template
class AccessorVariety(CodedTemplate):
    """Binned accessor variety of the n-grams around each character.

    The accessor variety of a string is the smaller of its numbers of
    distinct predecessors and successors in a corpus (every sequence start
    and end counting as a distinct neighbour): high for strings that occur
    in many contexts, i.e. that behave like words. For n = 2 .. ``max_n``
    each position gets two features, the bin of the AV of the n-gram that
    starts there and of the one that ends there; bins are
    ``floor(log2(AV))`` capped at ``n_bins - 1``, and n-grams unknown to the
    statistics fall in bin 0.

    Parameters
    ----------
    sequences : list of ndarray
        The training text as code points, one array per sequence.
    texts : list of str
        More (unlabeled) text for the statistics.
    max_n : int, default=5
    n_bins : int, default=8
    """

    type_name = "accessor_variety"

    def to_state(self):
        return ({"type": self.type_name, "max_n": self.max_n, "n_bins": self.n_bins,
                 "folds": self.folds, "n_ngrams": self.n_ngrams,
                 "digest": str(self._digest)},
                {"table": self.table})

    @classmethod
    def from_state(cls, state, arrays):
        obj = cls.__new__(cls)
        obj.max_n = state_int(state, "max_n", 2, 8)
        obj.n_bins = state_int(state, "n_bins", 1, 64)
        obj.folds = state_int(state, "folds", 1, MAX_FOLDS, default=1)
        obj.n_slots = 2 * (obj.max_n - 1)
        obj.n_ngrams = state_int(state, "n_ngrams", 0, 2**40)
        obj._digest = state_int(state, "digest", 0, 2**64)
        obj.table = arrays["table"]
        check_table(obj.table, "table", max_value=2**62)
        return obj

    def __init__(self, sequences, texts=(), max_n=5, n_bins=8, folds=1):
        self.max_n = int(max_n)
        self.n_bins = int(n_bins)
        if not 1 <= self.n_bins <= 255:
            raise ValueError(f"n_bins must be in [1, 255], got {n_bins}.")
        self.folds = int(folds)
        self.n_slots = 2 * (self.max_n - 1)
        cps, offsets, seq_fold = _statistics_corpus(sequences, texts, self.folds)
        n_train = int(offsets[len(sequences)])
        # AV 1 is the bin of unknown n-grams: the table keeps AV >= 2
        keys, av, bins = accessor_variety_stats(cps, offsets, self.max_n, seq_fold,
                                                self.n_bins, n_train, min_av=2)
        self.n_ngrams = int(keys.size)
        self.table = new_table(self.n_ngrams, width=2)
        build_lookup_values(keys, av.astype(np.uint64), self.table)
        self._digest = stable_id(f"{cps.size}|{self.n_ngrams}|"
                                 f"{int(np.bitwise_xor.reduce(keys)) if keys.size else 0}")
        # for fit_transform only (not saved): the bin every training position
        # reads, jackknifed with folds
        self._fit_bins = bins
        self._n_train = (len(sequences), n_train)

    def description(self):
        return f"av|{self.max_n}|{self.n_bins}|{self._digest:x}"

    def write_codes(self, units, sources, source_row, codes, fitting=False):
        if units.kind != "chars":
            raise ValueError("accessor variety features need character input.")
        bins = _fit_state(self, "_fit_bins", units, fitting, "accessor variety")
        if bins is None:
            bins = np.zeros((units.n_tokens, self.max_n - 1), dtype=np.uint8)
            _av_bins(units.ids[0], units.offsets, self.table, self.n_bins, bins)
        _av_codes(bins, units.offsets, codes)

    def code_keys(self):
        """Code ``b + 1``: AV bin b."""
        keys = np.zeros((self.n_slots, self.n_bins + 1), dtype=np.uint64)
        for k, t in enumerate(self._tids()):
            for b in range(self.n_bins):
                keys[k, b + 1] = _bin_key(t, b)
        return keys

    def feature_values(self, units, rows, subs, keys=None):
        """The bin each feature's key was written with (re-reading the text
        would not do: a jackknifed sequence read other statistics)."""
        if keys is None:
            raise ValueError("accessor-variety features are named from their keys.")
        tids = self._tids()
        bins = {int(_bin_key(tids[k], b)): b for k in range(self.n_slots)
                for b in range(self.n_bins)}
        return [str(bins[int(k)]) for k in keys]

    def _tids(self):
        return np.array([_template_id(f"{self.description()}|{k}")
                         for k in range(self.n_slots)], dtype=np.int64)

    def name(self, sub, values):
        n, end = divmod(sub, 2)
        return f"av_{'end' if end else 'begin'}_len{n + 2}={values[0]}"


def accessor_variety(cps, offsets, max_n):
    """Hash keys of every n-gram (1 < n <= max_n) of the corpus and its
    accessor variety ``min(distinct predecessors, distinct successors)``;
    sequence starts and ends count as a new, distinct neighbour each time.
    See :mod:`skcrf.feature_extraction._accessor_variety`."""
    keys, av, _ = accessor_variety_stats(
        np.asarray(cps, dtype=np.int64), offsets, max_n,
        np.full(max(offsets.size - 1, 0), -1, dtype=np.int64), 8, 0)
    return keys, av


@njit(**_JIT)
def _av_bins(cps, offsets, table, n_bins, bins):
    """``bins[i, n - 2]``: the AV bin in ``table`` of the n-gram starting at i
    (0 if the table does not have it), n = 2 .. bins.shape[1] + 1."""
    max_n = bins.shape[1] + 1
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        for i in range(a, b):
            h = np.uint64(0x12345)
            for n in range(1, min(max_n, b - i) + 1):
                h = _step(h, cps[i + n - 1])
                if n < 2:
                    continue
                g = _finish_ngram(h, n)
                j = _probe(table, g)
                if table[j, 0] == g:
                    bins[i, n - 2] = av_bin(np.int64(table[j, 1]), n_bins)


@njit(**_JIT)
def _av_codes(bins, offsets, codes):
    """Codes of the AV-bin features (bin + 1): slot 2 (n - 2) for the n-gram
    starting at t, slot 2 (n - 2) + 1 for the one ending at t."""
    n_max = bins.shape[1]
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        for i in range(a, b):
            for n in range(2, min(n_max + 1, b - i) + 1):
                k1 = 2 * (n - 2)
                c = bins[i, n - 2] + 1
                codes[i, k1] = c
                codes[i + n - 1, k1 + 1] = c


@njit(**_JIT)
def _bin_key(tid, b):
    """Key of AV bin ``b`` in the slot of template id ``tid``."""
    return _finish(_splitmix(_splitmix(np.uint64(tid)) ^ np.uint64(b + 1)))
