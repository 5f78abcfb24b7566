"""Unit sources: the rows of integer ids that templates read.

A source is named by a key tuple; :data:`SOURCE_KINDS` is the complete list
(an allow-list: model files may name no other).

``("col", c)``        the unit's column ``c`` (characters: column 0 only)
``("type",)``         its character type (1 + index into :data:`TYPE_NAMES`)
``("attr", name)``    a word attribute of column 0 (lower, prefix1, ..., shape)
``("flag", name)``    a word flag of column 0 (is_title, is_upper, has_digit): 1 or 0
``("class",)``        a character's word-segmentation class (1 + index into
                      :data:`~._char_classes.CWS_CLASSES`)
``("norm",)``         the character normalised (:func:`~._char_classes.normalised_char`)
``("same", k)``       present where the character equals the one ``k`` positions
                      on in the same sentence (reduplication: 看看)

A source value of :data:`~._units.ABSENT` (0) means "nothing here": templates
emit no feature for it. NumPy only: the model files' runtime reads sources too.
"""

from numbers import Integral

import numpy as np

from .._arrays import token_positions
from ._char_classes import (
    CHAR_TYPES,
    CWS_CLASSES,
    char_type,
    cws_class,
    normalised_char,
    word_shape,
)
from ._units import ABSENT, stable_id, unique_inverse

__all__ = ["SOURCE_KINDS", "TYPE_NAMES", "WORD_ATTRS", "WORD_FLAGS", "source",
           "source_matrix", "describe", "check_source_key"]

#: type source values are 1 + the index in this tuple (0 is ABSENT)
TYPE_NAMES = CHAR_TYPES + ("mixed",)
WORD_ATTRS = ("lower", "prefix1", "prefix2", "prefix3",
              "suffix1", "suffix2", "suffix3", "shape")
WORD_FLAGS = ("is_title", "is_upper", "has_digit")


# ---------------------------------------------------------------- access
def source(units, key):
    """The int64 row of source ``key`` (computed once per Units)."""
    cache = units._cache
    if key not in cache:
        check_source_key(key)
        cache[key] = np.ascontiguousarray(_READERS[key[0]](units, *key[1:]), dtype=np.int64)
    return cache[key]


def source_matrix(units, keys):
    """Rows of the given sources stacked as one (n_sources, n_tokens) array
    (computed once per Units and tuple of keys: do not write into it)."""
    cache_key = ("_matrix", tuple(keys))
    if cache_key not in units._cache:
        out = np.empty((len(keys), units.n_tokens), dtype=np.int64)
        for i, key in enumerate(keys):
            out[i] = source(units, key)
        units._cache[cache_key] = out
    return units._cache[cache_key]


def describe(units, key, ids):
    """Readable strings of source ``key``'s (non-padding) ids."""
    return _DESCRIBERS[key[0]](units, key, ids)


def check_source_key(key):
    """Raise ValueError unless ``key`` names a source of :data:`SOURCE_KINDS`
    with arguments of the right kind."""
    if not isinstance(key, tuple) or not key or key[0] not in SOURCE_KINDS:
        raise ValueError(f"Unknown unit source {key!r}.")
    ok = {
        "col": lambda a: len(a) == 1 and _is_int(a[0]) and 0 <= a[0] < 2**16,
        "type": lambda a: not a, "class": lambda a: not a, "norm": lambda a: not a,
        "attr": lambda a: len(a) == 1 and a[0] in WORD_ATTRS,
        "flag": lambda a: len(a) == 1 and a[0] in WORD_FLAGS,
        "same": lambda a: len(a) == 1 and _is_int(a[0]) and 0 < abs(a[0]) <= 100,
    }[key[0]]
    if not ok(key[1:]):
        raise ValueError(f"Unknown unit source {key!r}.")


def _is_int(v):
    return isinstance(v, Integral) and not isinstance(v, bool)


# ------------------------------------------------------- per distinct word
def _per_word(units, what):
    """Per-token values of a per-word function, computed once per distinct word."""
    cache_key = ("_per_word", what)
    if cache_key not in units._cache:
        uniq, inv = units.uniques[0], units.inverse[0]
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
        units._cache[cache_key] = vals[inv] if inv.size else vals[:0]
    return units._cache[cache_key]


def _word_type(word):
    types = {char_type(c) for c in word}
    return types.pop() if len(types) == 1 else "mixed"


def _attr_strings(w):
    lw = w.lower()
    return (lw, w[:1], w[:2], w[:3], w[-1:], w[-2:], w[-3:], word_shape(w))


def _flags(w):
    return (w.istitle(), w.isupper(), any(c.isdigit() for c in w))


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
    return _per_word(units, "type")


def _require_tokens(units, what):
    if units.kind != "tokens":
        raise ValueError(f"{what} features need token input (lists of words), "
                         "got character input.")


def _read_attr(units, name):
    _require_tokens(units, "word attribute")
    return _per_word(units, "attr")[:, WORD_ATTRS.index(name)]


def _read_flag(units, name):
    _require_tokens(units, "word flag")
    return _per_word(units, "flag")[:, WORD_FLAGS.index(name)]


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
    return _per_char(units, lambda c: ord(normalised_char(c)), _NORM_MEMO)


def _read_same(units, k):
    """1 where the character equals the one ``k`` positions on in the same
    sequence, else ABSENT."""
    _require_chars(units, "reduplication")
    cps, offsets = units.ids[0], units.offsets
    out = np.full(cps.size, ABSENT, dtype=np.int64)
    if cps.size:
        seq, T, pos = token_positions(offsets)
        inside = (pos + k >= 0) & (pos + k < T)
        t = np.flatnonzero(inside)
        out[t[cps[t + k] == cps[t]]] = 1
    return out


_READERS = {"col": _read_column, "type": _read_type, "attr": _read_attr,
            "flag": _read_flag, "class": _read_class, "norm": _read_norm,
            "same": _read_same}


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
    "class": lambda units, key, ids: [CWS_CLASSES[i - 1] for i in ids],
    "norm": lambda units, key, ids: [chr(i) for i in ids],
    "same": lambda units, key, ids: ["" for _ in ids],
}

#: every kind of source a template may read
SOURCE_KINDS = frozenset(_READERS)
