"""Reading units: raw sequences (text or tokens) as rows of integer ids.

A sequence is a ``str`` (its units are characters) or a list of tokens, each
a ``str`` or a tuple of ``str`` columns. :func:`read_units` turns a list of
them into :class:`Units`: one int64 id per unit and column (code points for
characters, a stable 62-bit hash for token strings), plus sequence offsets.
Templates read *sources* computed from these ids (:mod:`._sources`).

Positions outside a sequence read padding ids (see :func:`padding_id`),
which never collide with real ids. NumPy only.
"""

import hashlib
from collections.abc import Mapping, Set

import numpy as np

#: template offsets are limited to [-MAX_OFFSET, MAX_OFFSET]
MAX_OFFSET = 100

#: ids >= PAD stand for positions outside the sequence (see padding_id)
PAD = 1 << 62

#: a source value meaning "no unit here": no feature
ABSENT = 0

#: the constants of the SplitMix64 finaliser that hashes feature keys (the
#: Numba kernels of skcrf.feature_extraction._hashing and skcrf._numpy_inference share them)
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


def stable_id(s):
    """A 62-bit id of a string, the same in every process (never ABSENT, below PAD)."""
    h = hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 2 or 1


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
