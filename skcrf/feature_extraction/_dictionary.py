"""Dictionary features for Chinese word segmentation (character input).

:class:`DictionaryMatches`: every dictionary word found in the text (every
match, not greedy maximum matching) gives the positions it covers "a word of
length k begins / ends / passes through here" features. :class:`DictionaryWords`:
the words themselves (lexicalised, as pkuseg does). Both are *jackknifed*
while fitting (see :mod:`._jackknife`), so a training sentence sees its rare
words missing from the dictionary as new text will. The kernels below find
the matches with a rolling hash over a table of the words and their prefixes.
"""

import numpy as np
from numba import njit

from ._hashing import _JIT, _finish, _probe, _splitmix, _step, new_table
from ._jackknife import _code_points, jackknife_folds
from ._numpy_keys import check_table
from ._sources import _require_chars
from ._templates import (
    MAX_DICTIONARY_LEN,
    MAX_FOLDS,
    CodedTemplate,
    Template,
    _template_id,
    state_int,
)
from ._units import stable_id
from ._window_keys import flag_key


def _word_table(words):
    """``(number of words, hash table of the words, content digest)`` of a
    dictionary: the words checked to be ``str``, empty ones and duplicates
    dropped; the digest identifies the dictionary by content, so that equal
    dictionaries give equal feature keys."""
    bad = [w for w in words if not isinstance(w, str)]
    if bad:
        raise TypeError(f"dictionary entries must be str, got {bad[0]!r}.")
    words = [w for w in words if w]
    if not all(a < b for a, b in zip(words, words[1:])):   # not already sorted, unique
        words = sorted(set(words))
    table = new_table(sum(len(w) for w in words), width=2)
    if words:
        hash_words(*_code_points(words), table)
    return len(words), table, stable_id("\n".join(words))


def _fold_hits(units, table, n_words, folds, fitting, matches=None):
    """``(fold of each sequence, hits[word, fold])`` for the jackknifed
    dictionary features: one fold and no counts unless fitting with folds.
    ``matches``: :func:`~skcrf.feature_extraction._hashing.dictionary_matches` of
    ``units``, when the caller has them."""
    n_folds = folds if fitting and folds > 1 else 1
    fold = jackknife_folds(units.n_sequences, n_folds)
    hits = np.zeros((n_words + 1, n_folds), dtype=np.int64)
    if n_folds > 1:
        if matches is None:
            matches = dictionary_matches(units.ids[0], units.offsets, table)
        count_matches(matches[2], matches[3], fold, hits)
    return fold, hits


class DictionaryMatches(CodedTemplate):
    """Dictionary matches at every position (character input).

    For every dictionary word found in the text (every match, not greedy
    maximum matching; never across sequences), the positions it covers get
    "a word of length k begins / ends / passes through here" features;
    lengths from ``max_len`` up share one feature.

    With ``folds > 1``, training features are *jackknifed*: the training
    sentences are split into ``folds`` contiguous blocks (see
    :func:`jackknife_folds`), and a sentence sees only the
    dictionary words that also occur (as text) in another group. A word that
    occurs in a single group is thus unknown there, as a new word is at
    prediction time, so the model learns how far the dictionary can be
    trusted instead of learning that every word is in it. Prediction uses
    the whole dictionary.
    """

    _PARTS = ("begin", "end", "mid")
    type_name = "dictionary"
    writes_every_key = True

    def to_state(self):
        return ({"type": self.type_name, "max_len": self.max_len, "folds": self.folds,
                 "n_words": self.n_words, "digest": str(self._digest)},
                {"table": self.table})

    @classmethod
    def from_state(cls, state, arrays):
        obj = cls.__new__(cls)
        obj.max_len = state_int(state, "max_len", 1, MAX_DICTIONARY_LEN)
        obj.folds = state_int(state, "folds", 1, MAX_FOLDS)
        obj.n_slots, obj.n_words = 3 * obj.max_len, state_int(state, "n_words", 0, 2**40)
        obj._digest = state_int(state, "digest", 0, 2**64)
        obj.table = arrays["table"]
        check_table(obj.table, "table", max_value=obj.n_words)
        return obj

    def __init__(self, words, max_len, folds=1):
        self.max_len = int(max_len)
        self.folds = int(folds)
        self.n_slots = 3 * self.max_len
        self.n_words, self.table, self._digest = _word_table(words)

    def description(self):
        return f"dictionary|{self.max_len}|{self._digest:x}"

    def write_codes(self, units, sources, source_row, codes, fitting=False):
        if units.kind != "chars":
            raise ValueError("dictionary features need character input (each "
                             "sequence a str); got token sequences.")
        # every match found once, then counted per fold and flagged (code 1)
        matches = dictionary_matches(units.ids[0], units.offsets, self.table)
        fold, hits = _fold_hits(units, self.table, self.n_words, self.folds, fitting,
                                matches)
        match_flags(*matches, fold, hits, self.max_len, codes)

    def code_keys(self):
        keys = np.zeros((self.n_slots, 2), dtype=np.uint64)
        for k in range(self.n_slots):
            keys[k, 1] = flag_key(_template_id(f"{self.description()}|{k}"))
        return keys

    def name(self, sub, values):
        k, part = divmod(sub, 3)
        return f"dict_{self._PARTS[part]}_len{k + 1}"


class DictionaryWords(Template):
    """Lexicalised dictionary words (pkuseg's word features): at each position,
    the dictionary word of each length ``min_len .. max_len`` that ends there
    and the one that starts there, as features of their own (``w_end2=上海``):
    each word gets its own weights, so a word the model has not seen brings
    no feature at all rather than a misleading "no dictionary match".

    ``folds > 1`` jackknifes the training features as in
    :class:`DictionaryMatches`.
    """

    type_name = "dictionary_words"

    def __init__(self, words, min_len=2, max_len=6, folds=1):
        self.min_len, self.max_len, self.folds = int(min_len), int(max_len), int(folds)
        self.n_slots = 2 * (self.max_len - self.min_len + 1)
        self.n_words, self.table, self._digest = _word_table(words)

    def to_state(self):
        return ({"type": self.type_name, "min_len": self.min_len, "max_len": self.max_len,
                 "folds": self.folds, "n_words": self.n_words, "digest": str(self._digest)},
                {"table": self.table})

    @classmethod
    def from_state(cls, state, arrays):
        obj = cls.__new__(cls)
        obj.max_len = state_int(state, "max_len", 2, MAX_DICTIONARY_LEN)
        obj.min_len = state_int(state, "min_len", 2, obj.max_len)
        obj.folds = state_int(state, "folds", 1, MAX_FOLDS)
        obj.n_words = state_int(state, "n_words", 0, 2**40)
        obj.n_slots = 2 * (obj.max_len - obj.min_len + 1)
        obj._digest = state_int(state, "digest", 0, 2**64)
        obj.table = arrays["table"]
        check_table(obj.table, "table", max_value=obj.n_words)
        return obj

    def description(self):
        return f"dictionary_words|{self.min_len}|{self.max_len}|{self._digest:x}"

    def write_keys(self, units, sources, source_row, keys, slot0, fitting=False):
        _require_chars(units, "dictionary word")
        fold, hits = _fold_hits(units, self.table, self.n_words, self.folds, fitting)
        tids = np.array([_template_id(f"{self.description()}|{k}")
                         for k in range(self.n_slots)], dtype=np.int64)
        _word_keys(units.ids[0], units.offsets, fold, hits, self.table, self.min_len,
                   self.max_len, tids, keys, slot0)

    def feature_values(self, units, rows, subs, keys=None):
        cps = units.ids[0]
        out = []
        for r, sub in zip(rows.tolist(), subs.tolist()):
            n, end = divmod(sub, 2)
            n += self.min_len
            start = r - (n - 1) if end else r
            out.append("".join(chr(c) for c in cps[start:start + n]))
        return out

    def name(self, sub, values):
        n, end = divmod(sub, 2)
        return f"w_{'end' if end else 'begin'}{n + self.min_len}={values[0]}"


@njit(**_JIT)
def _word_keys(cps, offsets, fold, hits, table, min_len, max_len, tids, keys, slot0):
    """Keys of the dictionary words of length min_len..max_len starting at each
    position (slot 2 (l - min_len)) and ending at it (slot 2 (l - min_len) + 1)."""
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        f = fold[s]
        for i in range(a, b):
            h = np.uint64(0x12345)
            for k in range(1, min(max_len, b - i) + 1):
                h = _step(h, cps[i + k - 1])
                hk = h if h != np.uint64(0) else np.uint64(1)
                j = _probe(table, hk)
                if table[j, 0] != hk:
                    break               # no dictionary word starts with this text
                w = table[j, 1]
                if k < min_len or w == np.uint64(0):
                    continue
                if not seen_in_other_folds(hits, w, f):
                    continue
                slot = 2 * (k - min_len)
                keys[i, slot0 + slot] = _finish(
                    _splitmix(_splitmix(np.uint64(tids[slot])) ^ hk))
                keys[i + k - 1, slot0 + slot + 1] = _finish(
                    _splitmix(_splitmix(np.uint64(tids[slot + 1])) ^ hk))


# ------------------------------------------------------------------ kernels
@njit(**_JIT)
def hash_words(cps, word_offsets, table):
    """Insert every dictionary word and each of its prefixes into ``table``
    (width 2: rolling hash -> word index + 1 for a whole word, 0 for a
    prefix only)."""
    for w in range(word_offsets.size - 1):
        h = np.uint64(0x12345)
        for p in range(word_offsets[w], word_offsets[w + 1]):
            h = _step(h, cps[p])
            hk = h if h != np.uint64(0) else np.uint64(1)
            i = _probe(table, hk)
            table[i, 0] = hk
            if p == word_offsets[w + 1] - 1:
                table[i, 1] = np.uint64(w + 1)


@njit(cache=True, nogil=True)
def seen_in_other_folds(hits, w, fold):
    """Whether dictionary word ``w`` occurs in a fold other than ``fold``
    (``hits[w, g]``: its occurrences in fold g). Without folds (one column),
    every word counts as seen."""
    n_folds = hits.shape[1]
    if n_folds <= 1:
        return True
    for g in range(n_folds):
        if g != fold and hits[w, g] > 0:
            return True
    return False


def dictionary_matches(cps, offsets, table):
    """Every match of a dictionary word in the text: ``(start, length, word,
    sequence)`` int64 arrays, in text order.

    Every match of every length is found (not greedy maximum matching): from
    each position the scan extends while the text so far is a prefix of some
    dictionary word (``table``: see :func:`hash_words`). Matches never cross
    sequence boundaries. The arrays are allocated here, with NumPy (huge pages
    for large arrays, unlike Numba's allocator), room for two matches per
    character first, and grown when the scan stops full."""
    out = np.empty((4, max(16, 2 * cps.size)), dtype=np.int64)
    s, m = 0, 0
    while True:
        s, m = _matches_from(cps, offsets, table, s, m, out)
        if s == offsets.size - 1:
            return out[0, :m], out[1, :m], out[2, :m], out[3, :m]
        grown = np.empty((4, 2 * out.shape[1]), dtype=np.int64)
        grown[:, :m] = out[:, :m]
        out = grown


@njit(**_JIT)
def _matches_from(cps, offsets, table, s, m, out):
    """The matches of sequences s, s + 1, ... written to the rows of ``out``
    (start, length, word, sequence) from column m on, a whole sequence at a
    time, until the last sequence or until a sequence does not fit; returns
    (first sequence not written, matches). ``out`` is never reassigned here:
    Numba compiles arrays grown inside a loop to slow code."""
    start, length, word, seq = out[0], out[1], out[2], out[3]
    while s < offsets.size - 1:
        t0, T = offsets[s], offsets[s + 1] - offsets[s]
        m_seq = m
        for t in range(T):
            h = np.uint64(0x12345)
            for k in range(1, T - t + 1):
                h = _step(h, cps[t0 + t + k - 1])
                hk = h if h != np.uint64(0) else np.uint64(1)
                i = _probe(table, hk)
                if table[i, 0] != hk:
                    break  # no dictionary word starts with this text
                w = np.int64(table[i, 1])
                if w == 0:
                    continue
                if m_seq == start.size:
                    return s, m         # full: the caller grows out, asks again
                start[m_seq], length[m_seq], word[m_seq], seq[m_seq] = t0 + t, k, w, s
                m_seq += 1
        m = m_seq
        s += 1
    return s, m


@njit(**_JIT)
def count_matches(word, seq, fold, hits):
    """hits[w, fold[s]] += 1 for every match of word w - 1 in sequence s."""
    for j in range(word.size):
        hits[word[j], fold[seq[j]]] += 1


@njit(**_JIT)
def match_flags(start, length, word, seq, fold, hits, cap, flags):
    """Mark dictionary matches (:func:`dictionary_matches`):
    ``flags[t, 3 * (k - 1) + {0, 1, 2}]`` for "a word of (capped) length k
    begins / ends / passes through t". With more than one fold (``hits`` has
    a column per fold), a word counts in sequence s only if it also occurs in
    another fold than ``fold[s]``."""
    for j in range(start.size):
        w = np.uint64(word[j])
        if not seen_in_other_folds(hits, w, fold[seq[j]]):
            continue
        t, k = start[j], length[j]
        kk = min(k, cap) - 1
        flags[t, 3 * kk] = 1
        flags[t + k - 1, 3 * kk + 1] = 1
        for u in range(t + 1, t + k - 1):
            flags[u, 3 * kk + 2] = 1
