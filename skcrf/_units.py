"""Reading units: raw sequences (text or tokens) as rows of integer ids.

A sequence is a ``str`` (its units are characters) or a list of tokens, each
a ``str`` or a tuple of ``str`` columns. :func:`read_units` turns a list of
them into :class:`Units`: one int64 id per unit and column (code points for
characters, a stable 62-bit hash for token strings), plus sequence offsets.

Templates read *sources*: rows of one id per unit, named by a key tuple.

``("col", c)``        the unit's column ``c`` (characters: column 0 only)
``("type",)``         its character type (1 + index into :data:`TYPE_NAMES`)
``("attr", name)``    a word attribute of column 0 (lower, prefix1, ..., shape)
``("flag", name)``    a word flag of column 0 (is_title, is_upper, has_digit): 1 or 0

A source value of :data:`ABSENT` (0) means "nothing here": templates emit no
feature for it. Positions outside a sequence read padding ids (see
:func:`padding_id`), which never collide with real ids. A new kind of source
is one call to :func:`register_source` (``skcrf._cws_features`` adds its own).
"""

import hashlib
import unicodedata
from collections.abc import Mapping, Set

import numpy as np

__all__ = ["Units", "read_units", "register_source", "char_type", "word_shape", "stable_id", "CHAR_TYPES",
           "TYPE_NAMES", "WORD_ATTRS", "WORD_FLAGS", "MAX_OFFSET", "PAD", "ABSENT",
           "padding_id", "padding_of"]

CHAR_TYPES = ("digit", "latin", "punct", "cjk", "other")
#: type source values are 1 + the index in this tuple (0 is ABSENT)
TYPE_NAMES = CHAR_TYPES + ("mixed",)
WORD_ATTRS = ("lower", "prefix1", "prefix2", "prefix3",
              "suffix1", "suffix2", "suffix3", "shape")
WORD_FLAGS = ("is_title", "is_upper", "has_digit")

#: template offsets are limited to [-MAX_OFFSET, MAX_OFFSET]
MAX_OFFSET = 100
#: ids >= PAD stand for positions outside the sequence (see padding_id)
PAD = 1 << 62
#: a source value meaning "no unit here": no feature
ABSENT = 0
#: the constants of the SplitMix64 finaliser that hashes feature keys (the
#: Numba kernels of skcrf._feature_hashing and skcrf._numpy_tagger share them)
SPLITMIX_GOLD, SPLITMIX_M1, SPLITMIX_M2 = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9,
                                           0x94D049BB133111EB)


def padding_id(distance_before=0, distance_after=0):
    """Id read at ``distance_before`` positions before the first unit
    (``PAD + d``) or ``distance_after`` positions after the last one
    (``PAD + MAX_OFFSET + d``); distances are at most ``MAX_OFFSET``."""
    if distance_before:
        return PAD + distance_before
    return PAD + MAX_OFFSET + distance_after


def padding_of(unit_id):
    """``(side, distance)`` of a padding id: side -1 before the sequence, +1 after;
    ``None`` for a real unit id."""
    if unit_id < PAD:
        return None
    d = unit_id - PAD
    return (-1, d) if d <= MAX_OFFSET else (1, d - MAX_OFFSET)


def char_type(ch):
    """Type of one character: digit, latin, punct, cjk or other.

    Full-width forms (``２``, ``Ａ``, ``，``) are classified like their ASCII
    counterparts.

    >>> [char_type(c) for c in "2２aＡ，。上x😀"]
    ['digit', 'digit', 'latin', 'latin', 'punct', 'punct', 'cjk', 'latin', 'other']
    """
    cp = ord(ch)
    if (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x3134F
            or 0xF900 <= cp <= 0xFAFF or cp == 0x3007):
        return "cjk"
    norm = unicodedata.normalize("NFKC", ch)
    c = norm[0] if norm else ch
    if c.isdigit() or unicodedata.category(c) == "Nd":
        return "digit"
    if ("a" <= c <= "z") or ("A" <= c <= "Z") or (
            c.isalpha() and "LATIN" in unicodedata.name(c, "")):
        return "latin"
    cat = unicodedata.category(c)
    if cat[0] == "P" or (cat[0] == "S" and ord(c) < 0x3000):
        return "punct"  # punctuation, and symbols such as + % $ (not emoji)
    return "other"


def word_shape(word):
    """Word shape: X / x / d for upper / lower / digit, other characters kept,
    runs of one symbol cut at 4.

    >>> [word_shape(w) for w in ("Melbourne", "12", "U.S.", "ABC-9")]
    ['Xxxxx', 'dd', 'X.X.', 'XXX-d']
    """
    out = []
    last, run = None, 0
    for c in word:
        if c.isupper():
            s = "X"
        elif c.islower():
            s = "x"
        elif c.isdigit():
            s = "d"
        else:
            s = c
        if s == last:
            run += 1
        else:
            last, run = s, 1
        if run <= 4:
            out.append(s)
    return "".join(out)


def stable_id(s):
    """A 62-bit id of a string, the same in every process (never ABSENT, below PAD)."""
    h = hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 2 or 1


def _word_type(word):
    types = {char_type(c) for c in word}
    return types.pop() if len(types) == 1 else "mixed"


def _attr_strings(w):
    lw = w.lower()
    return (lw, w[:1], w[:2], w[:3], w[-1:], w[-2:], w[-3:], word_shape(w))


def _flags(w):
    return (w.istitle(), w.isupper(), any(c.isdigit() for c in w))


class Units:
    """Sequences as integer unit ids.

    Attributes
    ----------
    kind : {"chars", "tokens"}
    ids : ndarray of int64, shape (n_columns, n_tokens)
    lengths, offsets : ndarray of int64
    uniques : list of list of str
        Per column, the distinct token strings (tokens only).
    inverse : list of ndarray
        Per column, each token's index into ``uniques[c]`` (tokens only).
    """

    def __init__(self, kind, ids, lengths, uniques=None, inverse=None):
        self.kind = kind
        self.ids = ids
        self.lengths = lengths
        self.offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.offsets[1:])
        self.uniques = uniques
        self.inverse = inverse
        self.n_columns = ids.shape[0]
        self.n_sequences = lengths.size
        self.n_tokens = ids.shape[1]
        self._cache = {}

    # sources -----------------------------------------------------------
    def source(self, key):
        """The int64 row of source ``key`` (computed once per Units)."""
        if key not in self._cache:
            reader = _READERS.get(key[0])
            if reader is None:
                raise ValueError(f"Unknown unit source {key!r}.")
            self._cache[key] = np.ascontiguousarray(reader(self, *key[1:]), dtype=np.int64)
        return self._cache[key]

    def source_matrix(self, keys):
        """Rows of the given sources stacked as one (n_sources, n_tokens) array
        (computed once per Units and tuple of keys: do not write into it)."""
        cache_key = ("_matrix", tuple(keys))
        if cache_key not in self._cache:
            out = np.empty((len(keys), self.n_tokens), dtype=np.int64)
            for i, key in enumerate(keys):
                out[i] = self.source(key)
            self._cache[cache_key] = out
        return self._cache[cache_key]

    def describe(self, key, ids):
        """Readable strings of source ``key``'s (non-padding) ids."""
        return _DESCRIBERS[key[0]](self, key, ids)

    # per unique word of column 0 ------------------------------------------
    def _per_word(self, what):
        """Per-token values of a per-word function, computed once per distinct word."""
        cache_key = ("_per_word", what)
        if cache_key not in self._cache:
            uniq, inv = self.uniques[0], self.inverse[0]
            if what == "type":
                vals = np.array([TYPE_NAMES.index(_word_type(w)) + 1 if w else
                                 TYPE_NAMES.index("other") + 1 for w in uniq],
                                dtype=np.int64)
            elif what == "attr":
                vals = np.array([[stable_id(p) for p in _attr_strings(w)] if w else
                                 [ABSENT] * len(WORD_ATTRS) for w in uniq],
                                dtype=np.int64).reshape(len(uniq), len(WORD_ATTRS))
            else:
                vals = np.array([_flags(w) for w in uniq],
                                dtype=np.int64).reshape(len(uniq), len(WORD_FLAGS))
            self._cache[cache_key] = vals[inv] if inv.size else vals[:0]
        return self._cache[cache_key]


def unique_inverse(values):
    """``np.unique(values, return_inverse=True)`` for a 1-D int64 array, in time
    linear in its size and range when the values are small non-negative
    integers (code points, ids of a vocabulary), by sort otherwise."""
    values = np.asarray(values, dtype=np.int64).reshape(-1)
    if values.size == 0:
        return values.copy(), np.zeros(0, dtype=np.int64)
    lo, hi = int(values.min()), int(values.max())
    if lo < 0 or hi > 4 * values.size + (1 << 16):
        return np.unique(values, return_inverse=True)
    seen = np.zeros(hi + 1, dtype=np.bool_)
    seen[values] = True
    uniq = np.flatnonzero(seen)
    rank = np.cumsum(seen, dtype=np.int64) - 1
    return uniq, rank[values]


# ------------------------------------------------------------------ readers
def _read_column(units, c):
    if not 0 <= c < units.n_columns:
        raise ValueError(f"column {c} does not exist; the units have "
                         f"{units.n_columns} column(s).")
    return units.ids[c]


def _read_type(units):
    if units.kind == "chars":
        cps = units.ids[0]
        uniq, inv = unique_inverse(cps)
        utype = np.array([CHAR_TYPES.index(char_type(chr(c))) + 1 for c in uniq],
                         dtype=np.int64)
        return utype[inv.reshape(-1)] if cps.size else cps
    return units._per_word("type")


def _require_tokens(units, what):
    if units.kind != "tokens":
        raise ValueError(f"{what} features need token input (lists of words), "
                         "got character input.")


def _read_attr(units, name):
    _require_tokens(units, "word attribute")
    return units._per_word("attr")[:, WORD_ATTRS.index(name)]


def _read_flag(units, name):
    _require_tokens(units, "word flag")
    return units._per_word("flag")[:, WORD_FLAGS.index(name)]


_READERS = {"col": _read_column, "type": _read_type, "attr": _read_attr,
            "flag": _read_flag}


def _describe_column(units, key, ids):
    if units.kind == "chars":
        return [chr(i) for i in ids]
    c = key[1]
    names = {stable_id(w): w for w in units.uniques[c]}
    return [names.get(i, f"#{i:x}") for i in ids]


def _describe_attr(units, key, ids):
    k = WORD_ATTRS.index(key[1])
    names = {stable_id(p): p for p in (_attr_strings(w)[k] for w in units.uniques[0] if w)}
    return [names.get(i, "?") for i in ids]


_DESCRIBERS = {
    "col": _describe_column,
    "type": lambda units, key, ids: [TYPE_NAMES[i - 1] for i in ids],
    "attr": _describe_attr,
    "flag": lambda units, key, ids: ["" for _ in ids],
}


_BASE_KINDS = frozenset(_READERS)


def base_source_kinds():
    """The source kinds this module reads itself (others are registered by
    :mod:`skcrf._cws_features` when it is imported)."""
    return _BASE_KINDS


def register_source(kind, reader, describer):
    """Add a kind of source: ``reader(units, *args)`` returns the int64 row of
    ``(kind, *args)``, ``describer(units, key, ids)`` the strings of ids."""
    _READERS[kind] = reader
    _DESCRIBERS[kind] = describer


# ------------------------------------------------------------------- input
def read_units(X, expect_kind=None, expect_columns=None):
    """Read a list of sequences into :class:`Units`, refusing malformed input
    with an error that names the sequence and position."""
    if (isinstance(X, (str, bytes, Mapping, Set)) or not hasattr(X, "__len__")
            or not hasattr(X, "__iter__")):
        raise TypeError(
            "X must be a list of sequences (each a str, or a list of tokens), "
            f"got {type(X).__name__}."
        )
    X = list(X)
    kind = None
    for i, seq in enumerate(X):
        k = "chars" if isinstance(seq, str) else "tokens"
        if not isinstance(seq, str) and (seq is None or isinstance(seq, (bytes, Mapping))
                                         or not hasattr(seq, "__len__")):
            raise TypeError(
                f"X[{i}] is a {type(seq).__name__}; a sequence is a str or a list "
                "of tokens."
            )
        if kind is None:
            kind = k
        elif k != kind:
            raise TypeError(
                f"X[{i}] is {'a str' if k == 'chars' else 'a list of tokens'} but "
                f"X[0] is {'a str' if kind == 'chars' else 'a list of tokens'}; "
                "use one kind of input for all sequences."
            )
    if expect_kind is not None and kind is not None and kind != expect_kind:
        raise TypeError(
            f"The featurizer was fitted on {expect_kind} input but X holds "
            f"{kind} sequences."
        )
    kind = kind or expect_kind or "chars"
    if kind == "chars":
        return _read_chars(X)
    return _read_tokens(X, expect_columns)


def _read_chars(X):
    lengths = np.fromiter((len(s) for s in X), dtype=np.int64, count=len(X))
    text = "".join(X)
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"),
                        dtype=np.uint32).astype(np.int64)
    return Units("chars", cps[None, :], lengths)


def _read_tokens(X, expect_columns):
    lengths = np.fromiter((len(s) for s in X), dtype=np.int64, count=len(X))
    flat = [tok for seq in X for tok in seq]
    tok_types = set(map(type, flat))
    if tok_types <= {str}:
        n_cols = 1
        columns = [flat]
    elif tok_types <= {tuple, list}:
        n_cols = len(flat[0])
        try:
            columns = list(zip(*flat, strict=True))
        except ValueError:
            _raise_bad_token(X, n_cols)
        for col in columns:
            try:
                "".join(col)                 # fast check: every value is a str
            except TypeError:
                _raise_bad_token(X, n_cols)
    else:
        _raise_bad_token(X, 1 if str in tok_types else None)
    if expect_columns is not None and flat and n_cols != expect_columns:
        raise ValueError(
            f"The featurizer was fitted on tokens with {expect_columns} column(s), "
            f"X has {n_cols}."
        )
    if not flat:
        n_cols = expect_columns or 1
        columns = [[] for _ in range(n_cols)]
    ids = np.zeros((n_cols, len(flat)), dtype=np.int64)
    uniques, inverses = [], []
    for c, col in enumerate(columns):
        uniq = list(dict.fromkeys(col))
        index = dict(zip(uniq, range(len(uniq))))
        inv = np.fromiter(map(index.__getitem__, col), dtype=np.int64, count=len(col))
        uid = np.array([stable_id(w) for w in uniq], dtype=np.int64)
        if inv.size:
            ids[c] = uid[inv]
        uniques.append(uniq)
        inverses.append(inv)
    return Units("tokens", ids, lengths, uniques, inverses)


def _raise_bad_token(X, n_cols):
    for i, seq in enumerate(X):
        for t, tok in enumerate(seq):
            is_tuple = isinstance(tok, (tuple, list))
            cols = tuple(tok) if is_tuple else (tok,)
            if n_cols is None:
                n_cols = len(cols)
            if len(cols) != n_cols:
                raise ValueError(
                    f"X[{i}][{t}] has {len(cols)} column(s), expected {n_cols}."
                )
            for c, v in enumerate(cols):
                if not isinstance(v, str):
                    where = f"X[{i}][{t}]" + (f"[{c}]" if is_tuple else "")
                    raise TypeError(
                        f"{where} is {v!r} ({type(v).__name__}); a token is a str "
                        "or a tuple of str columns."
                    )
    raise TypeError("X holds tokens that are neither str nor tuples of str.")
