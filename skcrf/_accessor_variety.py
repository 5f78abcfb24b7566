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

from . import _feature_hashing as H

__all__ = ["accessor_variety_stats", "ngram_key", "av_bin"]

_JIT = dict(cache=True, nogil=True, fastmath=False)

_SEED = np.uint64(0x12345)
_BUCKET_OCCURRENCES = 1024        # the mean bucket (2048: 10 % slower on SXU)


@njit(**_JIT)
def ngram_key(cps, i, n):
    """Hash key of the n-gram at ``cps[i:i + n]`` (never 0)."""
    h = _SEED
    for p in range(i, i + n):
        h = H._step(h, cps[p])
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
    folded = bool((seq_fold >= 0).any())
    hcur = _unigram_hashes(cps)           # rolling hash of the n-gram at each position
    bins = np.zeros((n_bin_rows, max(max_n - 1, 0)), dtype=np.uint8)
    # work space, sized for the most occurrences (n = 2) and reused; all is
    # allocated here with NumPy, which asks for huge pages for large arrays
    # (Numba's allocator does not: 4 KiB page faults cost system time)
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
        n_keys = _count_buckets(*(a[:m] for a in by_bucket), start, n, n_bins, folded,
                                H.pow2_at_least(2 * biggest), H.pow2_at_least(4 * biggest),
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
    start, shift = H.bucket_bounds(g, m, per_bucket)
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
        h[i] = H._step(_SEED, cps[i])
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
            h = H._step(hcur[i], cps[i + n - 1])
            hcur[i] = h
            g[m] = _finish_ngram(h, n)
            left[m] = np.int32(cps[i - 1]) if i > a else np.int32(-1)
            right[m] = np.int32(cps[i + n]) if i + n < b else np.int32(-1)
            fold[m] = np.int32(f)
            pos[m] = i
            m += 1
    return m


_MULTI = np.int64(-2)     # a neighbour seen in two folds or more, or in text of no fold


@njit(**_JIT)
def _slot(tab, mask, h, k0, k1):
    """Row of the entry (k0, k1) in a small table (columns 0, 1: the key;
    column 0 == 0: empty), probed from hash ``h``."""
    i = h & mask
    while tab[i, 0] != 0 and (tab[i, 0] != k0 or tab[i, 1] != k1):
        i = (i + np.uint64(1)) & mask
    return np.int64(i)


@njit(**_JIT)
def _count_buckets(pg, pleft, pright, pfold, ppos, start, n, n_bins, folded, gsize, psize,
                   bins, min_av, keys, av, n_keys):
    """Count every bucket with tables of ``gsize`` (n-grams) and ``psize``
    ((n-gram, neighbour) pairs and (n-gram, fold) entries) rows, reused; the
    key and AV of every n-gram with AV >= ``min_av`` written to ``keys`` and
    ``av`` from ``n_keys`` on. Returns the new count."""
    # n-grams: key, 0 | left count, right count
    grams = np.zeros((gsize, 4), dtype=np.int64)
    gk = grams.view(np.uint64)
    # neighbours: n-gram key, 1 + 2 code + side | fold + 1 (or _MULTI), n-gram row
    pairs = np.zeros((psize, 4), dtype=np.int64)
    pk = pairs.view(np.uint64)
    # (n-gram, fold): n-gram row + 1, fold | neighbours only that fold has (left, right)
    single = np.zeros((psize, 4), dtype=np.int64)
    sk = single.view(np.uint64)
    used_g = np.empty(gsize, dtype=np.int64)
    used_p = np.empty(psize, dtype=np.int64)
    used_s = np.empty(psize, dtype=np.int64)
    row_of = np.empty(gsize, dtype=np.int64)       # n-gram row of each occurrence
    n_occ = np.empty(gsize, dtype=np.int64)        # occurrences of the n-gram of each row
    bin_col = n - 2
    for b in range(start.size - 1):
        lo, hi = start[b], start[b + 1]
        cnt = hi - lo
        if cnt == 0:
            continue
        gm = np.uint64(H.pow2_at_least(2 * cnt) - 1)
        pm = np.uint64(H.pow2_at_least(4 * cnt) - 1)
        ng, npairs, ns = 0, 0, 0
        for j in range(lo, hi):
            g = pg[j]
            r = _slot(gk, gm, g, g, np.uint64(0))
            if grams[r, 0] == 0:
                gk[r, 0] = g
                grams[r, 2] = 0
                grams[r, 3] = 0
                n_occ[r] = 0
                used_g[ng] = r
                ng += 1
            row_of[j - lo] = r
            n_occ[r] += 1
        for j in range(lo, hi):
            r = row_of[j - lo]
            if n_occ[r] == 1:       # one occurrence: one neighbour on each side
                grams[r, 2] = 1
                grams[r, 3] = 1
                continue
            g = pg[j]
            f = np.int64(pfold[j])
            mark = f + 1 if f >= 0 else _MULTI
            for side in range(2):
                c = np.int64(pleft[j] if side == 0 else pright[j])
                if c < 0:                       # a sequence boundary: always new
                    grams[r, 2 + side] += 1
                    continue
                code = np.uint64(1 + 2 * c + side)
                p = _slot(pk, pm, H._splitmix(g ^ code), g, code)
                if pairs[p, 0] == 0:
                    pk[p, 0] = g
                    pk[p, 1] = code
                    pairs[p, 2] = mark
                    pairs[p, 3] = r
                    used_p[npairs] = p
                    npairs += 1
                    grams[r, 2 + side] += 1
                elif pairs[p, 2] != _MULTI and pairs[p, 2] != mark:
                    pairs[p, 2] = _MULTI
        for q in range(ng):
            r = used_g[q]
            a = min(grams[r, 2], grams[r, 3])
            if a >= min_av:
                keys[n_keys] = gk[r, 0]
                av[n_keys] = a
                n_keys += 1
        if folded:
            # what each fold alone has: its single-fold neighbours, its boundaries
            for q in range(npairs):
                p = used_p[q]
                r = pairs[p, 3]
                if pairs[p, 2] != _MULTI and min(grams[r, 2], grams[r, 3]) >= 2:
                    ns = _single_add(single, sk, pm, used_s, ns, r, pairs[p, 2] - 1,
                                     np.int64((pk[p, 1] - np.uint64(1)) & np.uint64(1)))
            for j in range(lo, hi):
                f = np.int64(pfold[j])
                r = row_of[j - lo]
                if f < 0 or min(grams[r, 2], grams[r, 3]) < 2:
                    continue
                if pleft[j] < 0:
                    ns = _single_add(single, sk, pm, used_s, ns, r, f, 0)
                if pright[j] < 0:
                    ns = _single_add(single, sk, pm, used_s, ns, r, f, 1)
        for j in range(lo, hi):                 # the bin each position reads
            i = ppos[j]
            r = row_of[j - lo]
            if i >= bins.shape[0] or n_occ[r] == 1:     # AV 1: bin 0
                continue
            left, right = grams[r, 2], grams[r, 3]
            f = np.int64(pfold[j])
            if folded and f >= 0 and min(left, right) >= 2:
                e = _slot(sk, pm, H._splitmix(np.uint64(r + 1) ^ np.uint64(f)),
                          np.uint64(r + 1), np.uint64(f))
                if single[e, 0] != 0:
                    left -= single[e, 2]
                    right -= single[e, 3]
            bins[i, bin_col] = av_bin(min(left, right), n_bins)
        for q in range(ng):                     # clear what this bucket used
            grams[used_g[q], 0] = 0
        for q in range(npairs):
            pairs[used_p[q], 0] = 0
        for q in range(ns):
            single[used_s[q], 0] = 0
    return n_keys


@njit(**_JIT)
def _single_add(single, sk, mask, used, ns, r, f, side):
    """One more neighbour on ``side`` of the n-gram in row r that only fold f has."""
    k0, k1 = np.uint64(r + 1), np.uint64(f)
    e = _slot(sk, mask, H._splitmix(k0 ^ k1), k0, k1)
    if single[e, 0] == 0:
        sk[e, 0] = k0
        sk[e, 1] = k1
        single[e, 2] = 0
        single[e, 3] = 0
        used[ns] = e
        ns += 1
    single[e, 2 + side] += 1
    return ns
