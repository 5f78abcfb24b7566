"""Features for Chinese word segmentation (character input).

* unit sources (see :mod:`skcrf._units`): ``("class",)``, each character's
  segmentation class (:data:`CWS_CLASSES`: digits including Chinese numerals,
  date / time units, Latin letters, punctuation, other); ``("norm",)``, the
  character with full-width forms folded to ASCII and every digit and Latin
  letter replaced by its class (so ``２００７年`` and ``1998年`` share ``00000年``
  n-grams); ``("same", k)``, present where the character equals the one
  ``k`` positions on (``k < 0``: back) in the same sentence (reduplication:
  看看, 研究研究);
* :class:`DictionaryMatches`: dictionary words found in the text, with
  *jackknifed* training features: while fitting, a sentence sees only the
  dictionary words that also occur outside its fold, as unseen text will;
* :class:`AccessorVariety`: how many distinct characters precede and follow
  each n-gram in the training text (and in unlabeled text), binned — the
  unsupervised statistic of Feng et al. (2004) that Zhao & Kit (2008) feed to
  a CRF.
"""

import unicodedata

import numpy as np
from numba import njit

from . import _feature_hashing as H
from ._accessor_variety import accessor_variety_stats
from ._accessor_variety import av_bin as _bin
from ._accessor_variety import ngram_key as _ngram_key  # noqa: F401 (imported from here)
from ._accessor_variety import _finish_ngram
from ._templates import CodedTemplate, Template, _template_id, register_template
from ._units import ABSENT, register_source, stable_id, unique_inverse

__all__ = ["CWS_CLASSES", "DictionaryMatches", "DictionaryWords", "AccessorVariety",
           "AdjacentPMI", "cws_class"]

_JIT = dict(cache=True, nogil=True, fastmath=False)

CWS_CLASSES = ("digit", "date", "latin", "punct", "other")
# simplified and traditional forms (兩, 時, 號: corpora in traditional characters)
_NUMERALS = set("〇一二三四五六七八九十百千万亿零两兩壹贰叁肆伍陆柒捌玖拾佰仟萬億")
_DATE_UNITS = set("年月日时時分秒号號點点")


def cws_class(ch):
    """Segmentation class of a character.

    >>> [cws_class(c) for c in "2２三年Ａ，上"]
    ['digit', 'digit', 'digit', 'date', 'latin', 'punct', 'other']
    """
    from ._units import char_type

    if ch in _NUMERALS:
        return "digit"
    if ch in _DATE_UNITS:
        return "date"
    t = char_type(ch)
    return t if t in ("digit", "latin", "punct") else "other"


def _normalised(ch):
    c = unicodedata.normalize("NFKC", ch)
    c = c[0] if len(c) == 1 else ch
    cls = cws_class(ch)
    if cls == "digit" and ch not in _NUMERALS:
        return "0"
    if cls == "latin":
        return "A"
    return c


def _per_char(units, fn, memo):
    """``fn`` of every character, computed once per distinct character and
    remembered in ``memo`` (code point -> value) across calls: a Python call
    per character type is most of the cost of these sources."""
    cps = units.ids[0]
    uniq, inv = unique_inverse(cps)
    vals = np.empty(uniq.size, dtype=np.int64)
    for i, c in enumerate(uniq.tolist()):
        v = memo.get(c)
        if v is None:
            v = memo[c] = fn(chr(c))
        vals[i] = v
    return vals[inv.reshape(-1)] if cps.size else cps


def _require_chars(units, what):
    if units.kind != "chars":
        raise ValueError(f"{what} features need character input (each sequence a str).")


_CLASS_MEMO, _NORM_MEMO = {}, {}


def _read_class(units):
    _require_chars(units, "character class")
    return _per_char(units, lambda c: CWS_CLASSES.index(cws_class(c)) + 1, _CLASS_MEMO)


def _read_norm(units):
    _require_chars(units, "normalised character")
    return _per_char(units, lambda c: ord(_normalised(c)), _NORM_MEMO)


def _read_same(units, k):
    _require_chars(units, "reduplication")
    out = np.full(units.n_tokens, ABSENT, dtype=np.int64)
    _same_as(units.ids[0], units.offsets, int(k), out)
    return out


@njit(**_JIT)
def _same_as(cps, offsets, k, out):
    for s in range(offsets.size - 1):
        for t in range(offsets[s], offsets[s + 1]):
            u = t + k
            if offsets[s] <= u < offsets[s + 1] and cps[u] == cps[t]:
                out[t] = 1


register_source("class", _read_class,
                lambda units, key, ids: [CWS_CLASSES[i - 1] for i in ids])
register_source("norm", _read_norm, lambda units, key, ids: [chr(i) for i in ids])
register_source("same", _read_same, lambda units, key, ids: ["" for _ in ids])


# ---------------------------------------------------------------- dictionary
def jackknife_folds(n_sequences, n_folds):
    """Fold of each training sequence: ``n_folds`` contiguous blocks.

    Blocks, not round-robin: corpora come in document order, and a name that
    recurs in neighbouring sentences must fall in one fold to be as unknown
    there as in new documents. (On SXU's training text, a word occurrence is
    unknown to the other nine folds 7.1 % of the time with blocks, 3.1 % with
    round-robin folds; new text has 5-8 % new words.)
    """
    return np.arange(n_sequences, dtype=np.int64) * n_folds // max(n_sequences, 1)


def _code_points(words):
    cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"),
                        dtype=np.uint32).astype(np.int64)
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    return cps, np.concatenate([[0], np.cumsum(lengths)])


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
    table = H.new_table(sum(len(w) for w in words), width=2)
    if words:
        H.hash_words(*_code_points(words), table)
    return len(words), table, stable_id("\n".join(words))


def _fold_hits(units, table, n_words, folds, fitting, matches=None):
    """``(fold of each sequence, hits[word, fold])`` for the jackknifed
    dictionary features: one fold and no counts unless fitting with folds.
    ``matches``: :func:`~skcrf._feature_hashing.dictionary_matches` of
    ``units``, when the caller has them."""
    n_folds = folds if fitting and folds > 1 else 1
    fold = jackknife_folds(units.n_sequences, n_folds)
    hits = np.zeros((n_words + 1, n_folds), dtype=np.int64)
    if n_folds > 1:
        if matches is None:
            matches = H.dictionary_matches(units.ids[0], units.offsets, table)
        H.count_matches(matches[2], matches[3], fold, hits)
    return fold, hits


@register_template
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
        obj.max_len, obj.folds = int(state["max_len"]), int(state["folds"])
        obj.n_slots, obj.n_words = 3 * obj.max_len, int(state["n_words"])
        obj.table, obj._digest = arrays["table"], int(state["digest"])
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
        matches = H.dictionary_matches(units.ids[0], units.offsets, self.table)
        fold, hits = _fold_hits(units, self.table, self.n_words, self.folds, fitting,
                                matches)
        H.match_flags(*matches, fold, hits, self.max_len, codes)

    def code_keys(self):
        keys = np.zeros((self.n_slots, 2), dtype=np.uint64)
        for k in range(self.n_slots):
            keys[k, 1] = H.flag_key(_template_id(f"{self.description()}|{k}"))
        return keys

    def name(self, sub, values):
        k, part = divmod(sub, 3)
        return f"dict_{self._PARTS[part]}_len{k + 1}"


# ------------------------------------------- unsupervised statistics (AV, PMI)
def _statistics_corpus(sequences, texts, folds):
    """``(cps, offsets, seq_fold)`` of the text the statistics count: the
    training sequences (code-point arrays; in ``folds`` contiguous folds when
    ``folds > 1``) followed by the unlabeled ``texts`` (fold -1: every fold's)."""
    extra, extra_offsets = _code_points(list(texts))
    lengths = [len(q) for q in sequences] + np.diff(extra_offsets).tolist()
    cps = np.concatenate([np.asarray(q, dtype=np.int64) for q in sequences] + [extra])
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    seq_fold = np.full(offsets.size - 1, -1, dtype=np.int64)
    if folds > 1:
        seq_fold[:len(sequences)] = jackknife_folds(len(sequences), folds)
    return cps, offsets, seq_fold


def _fit_state(template, name, units, fitting, what):
    """What a template built for its own training text (attribute ``name``:
    the jackknifed statistics each training position reads) when it writes
    the keys of that text (``fitting``): returned once, then dropped (never
    saved nor pickled); None otherwise."""
    state = template.__dict__.get(name)
    if not fitting or state is None:
        return None
    if template._n_train != (units.n_sequences, units.n_tokens):
        raise ValueError(f"jackknifed {what}: fit on other text than the statistics "
                         "were built from.")
    del template.__dict__[name]
    return state


def _statistics_read(template, units, fitting, what):
    """``(fold_table, seq_fold)``: what each sequence of ``units`` reads. In
    the fit_transform of a jackknifed template, a sequence of fold f reads
    its fold's leave-one-out table (see :func:`_fit_state`); otherwise every
    sequence reads all the statistics (fold -1)."""
    fold_table = _fit_state(template, "_fold_table", units, fitting, what)
    if fold_table is not None:
        return fold_table, jackknife_folds(units.n_sequences, template.folds)
    return np.zeros((1, 2), dtype=np.uint64), np.full(units.n_sequences, -1, dtype=np.int64)


# ----------------------------------------------------------- accessor variety
@register_template
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
        obj.max_n, obj.n_bins = int(state["max_n"]), int(state["n_bins"])
        obj.folds = int(state.get("folds", 1))
        obj.n_slots, obj.n_ngrams = 2 * (obj.max_n - 1), int(state["n_ngrams"])
        obj.table, obj._digest = arrays["table"], int(state["digest"])
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
        self.table = H.new_table(self.n_ngrams, width=2)
        H.build_lookup_values(keys, av.astype(np.uint64), self.table)
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
    See :mod:`skcrf._accessor_variety`."""
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
                h = H._step(h, cps[i + n - 1])
                if n < 2:
                    continue
                g = _finish_ngram(h, n)
                j = H._probe(table, g)
                if table[j, 0] == g:
                    bins[i, n - 2] = _bin(np.int64(table[j, 1]), n_bins)


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
    return H._finish(H._splitmix(H._splitmix(np.uint64(tid)) ^ np.uint64(b + 1)))


# ------------------------------------------------- adjacent-character cohesion
_PMI_LO, _PMI_HI = -3, 9        # floored PMI clipped to this range
_N_PMI = _PMI_HI - _PMI_LO + 1
_PMI_BINS = 1 + 3 * _N_PMI       # bin 0: a pair the statistics do not have


@register_template
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
        obj.folds, obj._digest = int(state["folds"]), int(state["digest"])
        obj.table = arrays["table"]
        return obj

    def __init__(self, sequences, texts=(), folds=1):
        self.folds = int(folds)
        cps, offsets, seq_fold = _statistics_corpus(sequences, texts, self.folds)
        keys, bins, fold_keys, fold_bins = adjacent_pmi(cps, offsets, seq_fold,
                                                        max(self.folds, 1))
        self.table = H.new_table(keys.size, width=2)
        H.build_lookup_values(keys, bins, self.table)
        self._digest = stable_id(f"pmi|{cps.size}|{int(keys[:1000].sum()) if keys.size else 0}")
        if self.folds > 1:                  # for fit_transform only; not saved
            self._fold_table = H.new_table(fold_keys.size, width=2)
            H.build_lookup_values(fold_keys, fold_bins, self._fold_table)
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
    k = H._splitmix(k ^ H._splitmix(np.uint64(f) + np.uint64(0x9E37)))
    return k if k != np.uint64(0) else np.uint64(1)


def _pmi_bin_name(b):
    if b == 0:
        return "unseen"
    p, c = divmod(b - 1, 3)
    return f"{p + _PMI_LO}|n{('1', '2-3', '4+')[c]}"


@njit(**_JIT)
def _pair_key(a, b):
    return H._finish(H._splitmix(H._splitmix(np.uint64(a) + np.uint64(7)) ^ np.uint64(b)))


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
    pairs = H.new_table(n_pairs, width=4)     # key, count, a, b
    # (pair, fold) entries: key, count, pair key, fold
    fold_pairs = H.new_table(n_pairs if n_folds > 1 else 0, width=4)
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
            j = H._probe(pairs, k)
            pairs[j, 0] = k
            pairs[j, 1] += np.uint64(1)
            pairs[j, 2] = np.uint64(uid[t - 1])
            pairs[j, 3] = np.uint64(uid[t])
            if folded and f >= 0:
                fk = _fold_key(k, f)
                j = H._probe(fold_pairs, fk)
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
        i = H._probe(pairs, fold_pairs[j, 2])
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
                j = H._probe(fold_table, fk)
                bn = np.int64(fold_table[j, 1]) if fold_table[j, 0] == fk else 0
            else:
                j = H._probe(table, k)
                bn = np.int64(table[j, 1]) if table[j, 0] == k else 0
            codes[t, 0] = bn + 1
            codes[t - 1, 1] = bn + 1


# ------------------------------------------------- lexicalised dictionary words
@register_template
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
        obj.min_len, obj.max_len = int(state["min_len"]), int(state["max_len"])
        obj.folds, obj.n_words = int(state["folds"]), int(state["n_words"])
        obj.n_slots = 2 * (obj.max_len - obj.min_len + 1)
        obj.table, obj._digest = arrays["table"], int(state["digest"])
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
                h = H._step(h, cps[i + k - 1])
                hk = h if h != np.uint64(0) else np.uint64(1)
                j = H._probe(table, hk)
                if table[j, 0] != hk:
                    break               # no dictionary word starts with this text
                w = table[j, 1]
                if k < min_len or w == np.uint64(0):
                    continue
                if not H.seen_in_other_folds(hits, w, f):
                    continue
                slot = 2 * (k - min_len)
                keys[i, slot0 + slot] = H._finish(
                    H._splitmix(H._splitmix(np.uint64(tids[slot])) ^ hk))
                keys[i + k - 1, slot0 + slot + 1] = H._finish(
                    H._splitmix(H._splitmix(np.uint64(tids[slot + 1])) ^ hk))
