"""SequenceFeaturizer: raw sequences (text or tokens) -> Sequences."""

import hashlib
import unicodedata
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _feature_hashing as H
from ._persistence import VersionedPickleMixin
from ._sequences import Sequences
from ._sklearn_compat import Interval, StrOptions, _fit_context

__all__ = ["SequenceFeaturizer", "char_type", "word_shape"]

CHAR_TYPES = ("digit", "latin", "punct", "cjk", "other")
_MIXED = "mixed"
_WORD_ATTRS = ("lower", "prefix1", "prefix2", "prefix3",
               "suffix1", "suffix2", "suffix3", "shape")
_WORD_FLAGS = ("is_title", "is_upper", "has_digit")


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


def _word_type(word):
    types = {char_type(c) for c in word}
    return types.pop() if len(types) == 1 else _MIXED


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


def _stable_id(s):
    """A 62-bit id of a string, the same in every process (below the padding ids)."""
    h = hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 2 or 1


class SequenceFeaturizer(VersionedPickleMixin, TransformerMixin, BaseEstimator):
    """Turn raw sequences into CRF features (a :class:`Sequences`).

    A sequence is a ``str`` (its units are characters: Chinese word
    segmentation) or a list of tokens, each a ``str`` or a tuple of ``str``
    columns such as ``(word, pos)`` (NER, chunking). Every template below is
    evaluated in compiled code over integer ids; features are binary.

    Parameters
    ----------
    unit_offsets : tuple of int, default=(-2, -1, 0, 1, 2)
        One feature per offset: the unit at ``t + offset`` (``C[-1]=上``).
        Positions outside the sequence are padding units (``<s-1>``, ``</s+1>``).
    ngram_offsets : tuple of (int, int), default=((-2, -1), (-1, 0), (0, 1), (1, 2), (-1, 1))
        Pairs of offsets: the two units together (``C[-1]C[0]=上海``); the
        default includes the skip pair (-1, +1).
    char_type_offsets : tuple of int, default=(-1, 0, 1)
        Type of the unit at each offset: digit, latin, punct, cjk or other
        (full-width forms as their ASCII counterparts); for word tokens the
        common type of their characters, or ``mixed``.
    dictionary : iterable of str, default=None
        Words (character input only). At each position, features "a
        dictionary word of length k begins / ends / passes through here",
        for every match (not greedy maximum matching).
    dictionary_max_len : int, default=6
        Lengths from this one up share one feature (``dict_begin_len6``).
    word_shape : bool or "auto", default="auto"
        Word features of the unit (first column): lowercase form, prefixes
        and suffixes of length 1-3, shape (``Xxxxx``, ``dd``, ``X.X.``) and
        title / upper / has-digit flags. "auto": on for token input, off for
        character input.
    columns : tuple of int, default=None
        Token columns the unit and n-gram templates apply to (``None``: all).
        Word shape and unit types use the first column.
    bias : bool, default=True
        A constant feature on every token.
    min_freq : int, default=1
        Drop features seen fewer than ``min_freq`` times in ``fit``.
        Features unseen in ``fit`` are ignored by ``transform``.

    Attributes
    ----------
    input_kind_ : {"chars", "tokens"}
    n_columns_ : int
    n_features_out_ : int
    feature_counts_ : ndarray of shape (n_features_out_,)
        Occurrences of each feature in the training data.

    Examples
    --------
    >>> from skcrf import SequenceFeaturizer
    >>> f = SequenceFeaturizer(unit_offsets=(0,), ngram_offsets=((-1, 0),),
    ...                        char_type_offsets=(), bias=False)
    >>> X = f.fit_transform(["上海", "海上"])
    >>> sorted(f.get_feature_names_out()[X[0][1].indices])
    ['C[-1]C[0]=上海', 'C[0]=海']
    """

    _parameter_constraints = {
        "unit_offsets": [tuple, list],
        "ngram_offsets": [tuple, list],
        "char_type_offsets": [tuple, list],
        "dictionary": [None, "array-like", set, frozenset, dict],
        "dictionary_max_len": [Interval(Integral, 1, None, closed="left")],
        "word_shape": ["boolean", StrOptions({"auto"})],
        "columns": [None, tuple, list],
        "bias": ["boolean"],
        "min_freq": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        unit_offsets=(-2, -1, 0, 1, 2),
        ngram_offsets=((-2, -1), (-1, 0), (0, 1), (1, 2), (-1, 1)),
        char_type_offsets=(-1, 0, 1),
        dictionary=None,
        dictionary_max_len=6,
        word_shape="auto",
        columns=None,
        bias=True,
        min_freq=1,
    ):
        self.unit_offsets = unit_offsets
        self.ngram_offsets = ngram_offsets
        self.char_type_offsets = char_type_offsets
        self.dictionary = dictionary
        self.dictionary_max_len = dictionary_max_len
        self.word_shape = word_shape
        self.columns = columns
        self.bias = bias
        self.min_freq = min_freq

    # ------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the feature vocabulary of ``X``."""
        self._fit_transform(X, keep=False)
        return self

    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the features of ``X``."""
        self._validate_params()
        return self._fit_transform(X, keep=True)

    def _fit_transform(self, X, keep):
        units = _read_units(X)
        if units.n_sequences == 0:
            raise ValueError("X is empty: need at least one sequence to fit.")
        templates = self._templates(units)
        keys = self._keys(units, templates)
        table = H.count_all(keys)
        counts = table[:, 1].astype(np.int64)
        first = table[:, 2].astype(np.int64)
        used = np.flatnonzero(table[:, 0])
        used = used[counts[used] >= self.min_freq]
        # columns in order of first occurrence: deterministic and readable
        used = used[np.argsort(first[used], kind="stable")]
        vocab_keys = table[used, 0]
        slot = first[used] % keys.shape[1]
        row = first[used] // keys.shape[1]

        self.input_kind_ = units.kind
        self.n_columns_ = units.n_columns
        self._templates_ = templates
        self._lookup_ = _Lookup(vocab_keys)
        self.feature_counts_ = counts[used]
        self.n_features_out_ = int(vocab_keys.size)
        # what each column looked at, to name it on demand
        self._feature_slot_ = slot.astype(np.int32)
        self._feature_a_, self._feature_b_ = templates.feature_ids(units, row, slot)
        self._id_strings_ = _id_strings(units) if units.kind == "tokens" else {}
        if not keep:
            return None
        return self._to_sequences(keys, units)

    # ------------------------------------------------------ transform
    def transform(self, X):
        """Features of ``X`` as a :class:`Sequences`; unseen features are ignored."""
        check_is_fitted(self)
        units = _read_units(X, expect_kind=self.input_kind_,
                           expect_columns=self.n_columns_)
        keys = self._keys(units, self._templates_)
        return self._to_sequences(keys, units)

    def _to_sequences(self, keys, units):
        indptr, indices = H.keys_to_csr(keys, self._lookup_.table)
        X = sp.csr_matrix(
            (np.ones(indices.size), indices, indptr),
            shape=(keys.shape[0], self.n_features_out_),
        )
        return Sequences._from_unique_csr(X, units.lengths)

    def get_feature_names_out(self, input_features=None):
        """Readable names of the output columns (``"C[-1]C[0]=上海"``, ``"dict_begin_len3"``)."""
        check_is_fitted(self)
        names = self._templates_.names(self._feature_slot_, self._feature_a_,
                                       self._feature_b_, self._id_strings_)
        return np.asarray(names, dtype=object)

    # ------------------------------------------------------ templates
    def _templates(self, units):
        shape = self.word_shape
        if shape == "auto":
            shape = units.kind == "tokens"
        if self.dictionary is not None and units.kind != "chars":
            raise ValueError(
                "dictionary features need character input (each sequence a str); "
                "got token sequences."
            )
        columns = (tuple(range(units.n_columns)) if self.columns is None
                   else tuple(self.columns))
        for c in columns:
            if not isinstance(c, Integral) or not 0 <= c < units.n_columns:
                raise ValueError(
                    f"columns={self.columns!r}: column {c!r} does not exist; the "
                    f"tokens have {units.n_columns} column(s)."
                )
        for o in self.unit_offsets:
            _check_offset(o, "unit_offsets")
        for pair in self.ngram_offsets:
            if len(pair) != 2:
                raise ValueError(f"ngram_offsets: {pair!r} is not a pair of offsets.")
            _check_offset(pair[0], "ngram_offsets")
            _check_offset(pair[1], "ngram_offsets")
        for o in self.char_type_offsets:
            _check_offset(o, "char_type_offsets")
        return _Templates(columns, tuple(self.unit_offsets), tuple(map(tuple, self.ngram_offsets)),
                          tuple(self.char_type_offsets), bool(shape), bool(self.bias),
                          self.dictionary, int(self.dictionary_max_len), units.kind)

    def _keys(self, units, templates):
        return templates.keys(units)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags


def _check_offset(o, name):
    if not isinstance(o, Integral) or abs(int(o)) > 100:
        raise ValueError(f"{name}: {o!r} is not an int offset in [-100, 100].")


class _Lookup:
    """Hash table from feature key to output column (plain arrays: picklable)."""

    def __init__(self, vocab_keys):
        self.table = H.new_table(vocab_keys.size, width=2)
        H.build_lookup(np.ascontiguousarray(vocab_keys), self.table)


# ---------------------------------------------------------------- inputs
class _Units:
    """Sequences as integer unit ids: ``ids`` (n_columns, n_tokens)."""

    def __init__(self, kind, ids, lengths, strings, type_of):
        self.kind = kind
        self.ids = ids
        self.lengths = lengths
        self.offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self.strings = strings          # column -> list of unique strings (tokens)
        self.type_of = type_of          # per token: index into CHAR_TYPES + mixed
        self.n_columns = ids.shape[0]
        self.n_sequences = lengths.size
        self.n_tokens = ids.shape[1]


def _read_units(X, expect_kind=None, expect_columns=None):
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
        raise TypeError(
            "X must be a list of sequences (each a str, or a list of tokens), "
            f"got {type(X).__name__}."
        )
    X = list(X)
    kind = None
    for i, seq in enumerate(X):
        k = "chars" if isinstance(seq, str) else "tokens"
        if not isinstance(seq, str) and (seq is None or isinstance(seq, bytes)
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
    uniq, inv = np.unique(cps, return_inverse=True)
    tmap = {t: k for k, t in enumerate(CHAR_TYPES)}
    utype = np.array([tmap[char_type(chr(c))] for c in uniq], dtype=np.int64)
    type_of = utype[inv.reshape(-1)] if cps.size else np.zeros(0, np.int64)
    return _Units("chars", cps[None, :], lengths, None, type_of)


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
            columns = [list(c) for c in zip(*flat, strict=True)]
        except ValueError:
            columns = None
        val_types = set()
        for col in columns or []:
            val_types.update(map(type, col))
        if columns is None or not val_types <= {str}:
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
    strings = []
    for c, col in enumerate(columns):
        index = {}
        inv = np.fromiter((index.setdefault(w, len(index)) for w in col),
                          dtype=np.int64, count=len(col))
        uniq = list(index)
        uid = np.array([_stable_id(w) for w in uniq], dtype=np.int64)
        if inv.size:
            ids[c] = uid[inv]
        strings.append((uniq, inv))
    tmap = {t: k for k, t in enumerate(CHAR_TYPES + (_MIXED,))}
    uniq0, inv0 = strings[0]
    utype = np.array([tmap[_word_type(w)] if w else tmap["other"] for w in uniq0],
                     dtype=np.int64)
    type_of = utype[inv0] if inv0.size else np.zeros(0, np.int64)
    return _Units("tokens", ids, lengths, strings, type_of)


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


# -------------------------------------------------------------- templates
class _Templates:
    """The list of templates of a fitted featurizer and how to evaluate them."""

    def __init__(self, columns, unit_offsets, ngram_offsets, type_offsets, shape,
                 bias, dictionary, dict_cap, kind):
        self.kind = kind
        specs, names = [], []
        for c in columns:
            for o in unit_offsets:
                specs.append((c, o, H.NO_OFFSET))
                names.append(("unit", c, o, None))
            for a, b in ngram_offsets:
                specs.append((c, a, b))
                names.append(("ngram", c, a, b))
        self.window_specs = np.array(specs, dtype=np.int64).reshape(-1, 3)
        self.window_names = names
        self.type_offsets = type_offsets
        self.shape = shape
        self.bias = bias
        self.dict_cap = dict_cap
        self.dict_table = None
        if dictionary is not None:
            words = [w for w in dictionary if isinstance(w, str) and w]
            bad = [w for w in dictionary if not isinstance(w, str)]
            if bad:
                raise TypeError(f"dictionary entries must be str, got {bad[0]!r}.")
            n_prefixes = sum(len(w) for w in words)
            self.dict_table = H.new_table(n_prefixes, width=2)
            if words:
                cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"),
                                    dtype=np.uint32).astype(np.int64)
                wl = np.array([len(w) for w in words], dtype=np.int64)
                H.hash_words(cps, np.concatenate([[0], np.cumsum(wl)]), self.dict_table)
        # slot layout: window | types | word attrs | flags | dictionary | bias
        n_win = len(names)
        self.slot_types = n_win
        self.slot_attrs = self.slot_types + len(type_offsets)
        self.slot_flags = self.slot_attrs + (len(_WORD_ATTRS) if shape else 0)
        self.slot_dict = self.slot_flags + (len(_WORD_FLAGS) if shape else 0)
        self.slot_bias = self.slot_dict + (3 * dict_cap if self.dict_table is not None else 0)
        self.n_slots = self.slot_bias + (1 if bias else 0)
        # template ids: the slot index (stable for a given parameter set)
        self.tpl_ids = np.arange(1, self.n_slots + 1, dtype=np.int64)

    def keys(self, units):
        keys = np.zeros((units.n_tokens, self.n_slots), dtype=np.uint64)
        tid = self.tpl_ids
        if len(self.window_specs):
            H.window_keys(units.ids, units.offsets, self.window_specs,
                          tid[:self.slot_types], keys, 0)
        if self.type_offsets:
            specs = np.array([(0, o, H.NO_OFFSET) for o in self.type_offsets],
                             dtype=np.int64)
            # type ids + 1 so that they never equal a padding id
            H.window_keys((units.type_of + 1)[None, :], units.offsets, specs,
                          tid[self.slot_types:self.slot_attrs], keys, self.slot_types)
        if self.shape:
            attrs, flags = _word_attributes(units)
            H.token_attr_keys(attrs, tid[self.slot_attrs:self.slot_flags], keys,
                              self.slot_attrs)
            H.flag_keys(flags, tid[self.slot_flags:self.slot_dict], keys, self.slot_flags)
        if self.dict_table is not None:
            flags = np.zeros((units.n_tokens, 3 * self.dict_cap), dtype=np.int8)
            H.dictionary_flags(units.ids[0], units.offsets, self.dict_table,
                               self.dict_cap, flags)
            H.flag_keys(flags, tid[self.slot_dict:self.slot_bias], keys, self.slot_dict)
        if self.bias:
            keys[:, self.slot_bias] = H.mix(tid[self.slot_bias], 0, 0)
        return keys

    # names -------------------------------------------------------------
    def feature_ids(self, units, rows, slots):
        """What each feature looked at, from its first occurrence (vectorised).

        Returns ``a, b`` (int64): for unit / n-gram templates the unit ids at
        the two offsets (padding positions encoded as in the kernels), for
        type templates the type index + 1 (or padding), for word attributes
        the attribute's string id; 0 elsewhere.
        """
        a = np.zeros(rows.size, dtype=np.int64)
        b = np.zeros(rows.size, dtype=np.int64)
        seq = np.searchsorted(units.offsets, rows, side="right") - 1
        t = rows - units.offsets[seq]
        T = units.lengths[seq]

        def at(values, offs, sel):
            p = t[sel] + offs
            inside = (p >= 0) & (p < T[sel])
            out = np.where(p < 0, H.PAD - p, H.PAD + 1000 + (p - T[sel] + 1))
            out[inside] = values[(rows[sel] + offs - 0)[inside]]
            return out

        win = slots < self.slot_types
        if win.any():
            spec = self.window_specs[slots[win]]
            idx = np.flatnonzero(win)
            for c in np.unique(spec[:, 0]):
                mine = spec[:, 0] == c
                sel = idx[mine]
                a[sel] = at(units.ids[c], spec[mine, 1], sel)
                single = spec[mine, 2] == H.NO_OFFSET
                o2 = np.where(single, 0, spec[mine, 2])
                b[sel] = np.where(single, 0, at(units.ids[c], o2, sel))
        typ = (slots >= self.slot_types) & (slots < self.slot_attrs)
        if typ.any():
            sel = np.flatnonzero(typ)
            offs = np.asarray(self.type_offsets, dtype=np.int64)[slots[sel] - self.slot_types]
            a[sel] = at(units.type_of + 1, offs, sel)
        att = (slots >= self.slot_attrs) & (slots < self.slot_flags)
        if att.any():
            sel = np.flatnonzero(att)
            attrs, _ = _word_attributes(units)
            a[sel] = attrs[rows[sel], slots[sel] - self.slot_attrs]
        return a, b

    def names(self, slots, a, b, strings):
        """Readable feature names (computed on demand: a Python loop per feature)."""
        type_names = ("",) + CHAR_TYPES + (_MIXED,)
        chars = self.kind == "chars"
        sep = "" if chars else "|"

        def unit(v):
            if v >= H.PAD:
                d = v - H.PAD
                return f"<s-{d}>" if d < 1000 else f"</s+{d - 1000}>"
            return chr(v) if chars else strings.get(v, f"#{v:x}")

        out = []
        for s, x, y in zip(slots.tolist(), a.tolist(), b.tolist()):
            if s < self.slot_types:
                what, c, o1, o2 = self.window_names[s]
                lab = "C" if c == 0 else f"C{c}"
                if what == "unit":
                    out.append(f"{lab}[{o1}]={unit(x)}")
                else:
                    out.append(f"{lab}[{o1}]{lab}[{o2}]={unit(x)}{sep}{unit(y)}")
            elif s < self.slot_attrs:
                o = self.type_offsets[s - self.slot_types]
                typ = type_names[x] if x < H.PAD else (
                    "<s>" if x - H.PAD < 1000 else "</s>")
                out.append(f"T[{o}]={typ}")
            elif s < self.slot_flags:
                out.append(f"{_WORD_ATTRS[s - self.slot_attrs]}={strings.get(x, '?')}")
            elif s < self.slot_dict:
                out.append(_WORD_FLAGS[s - self.slot_flags])
            elif s < self.slot_bias:
                k, part = divmod(s - self.slot_dict, 3)
                out.append(f"dict_{('begin', 'end', 'mid')[part]}_len{k + 1}")
            else:
                out.append("bias")
        return out


def _attr_strings(w):
    lw = w.lower()
    return (lw, w[:1], w[:2], w[:3], w[-1:], w[-2:], w[-3:], word_shape(w))


def _id_strings(units):
    """Stable id -> string for every token string and word attribute of ``units``."""
    out = {}
    for uniq, _ in units.strings:
        out.update(zip(map(_stable_id, uniq), uniq))
    for w in units.strings[0][0]:
        for part in _attr_strings(w):
            out[_stable_id(part)] = part
    return out


def _word_attributes(units):
    """Per-token word attributes (hashed ids) and flags, computed per unique word."""
    if getattr(units, "_word_attrs", None) is not None:
        return units._word_attrs
    uniq, inv = units.strings[0]
    n_attr = len(_WORD_ATTRS)
    uattr = np.zeros((len(uniq), n_attr), dtype=np.int64)
    uflag = np.zeros((len(uniq), len(_WORD_FLAGS)), dtype=np.int8)
    for i, w in enumerate(uniq):
        if not w:
            continue
        parts = _attr_strings(w)
        for k, part in enumerate(parts):
            uattr[i, k] = _stable_id(part)
        uflag[i] = (w.istitle(), w.isupper(), any(c.isdigit() for c in w))
    units._word_attrs = uattr[inv], uflag[inv]
    return units._word_attrs
