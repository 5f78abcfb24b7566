"""Feature templates as objects: what each reads, its keys, its feature names.

A template is evaluated at every position of every sequence and yields at
most one feature per *slot* (most templates have one slot). Its feature
*key* is a 64-bit hash of the template's id and of the unit ids it read, so a
feature is the same column wherever it occurs, in any process, on any shard.

* :class:`Window` reads units from sources (:mod:`skcrf._units`) at any
  offsets, any number of them, any columns: ``C[-1]=上``, ``C[-1]C[0]=上海``,
  ``T[0]=digit``, ``lower=melbourne``, a CRF++ ``U`` line, a constant bias.
* :class:`DictionaryMatches`: "a dictionary word of length k begins / ends /
  passes through here".

:class:`TemplateSet` lays templates out in slots, computes all keys, and
names features. A new kind of template is a new subclass of
:class:`Template`; the others do not change.
"""

import numpy as np

from . import _feature_hashing as H
from ._sequences import sequence_of
from ._units import ABSENT, MAX_OFFSET, padding_of, stable_id

__all__ = ["Template", "Window", "DictionaryMatches", "TemplateSet", "check_offset"]


def check_offset(offset, what):
    """An int offset in [-MAX_OFFSET, MAX_OFFSET], or a ValueError naming ``what``."""
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, np.integer)) \
            or abs(int(offset)) > MAX_OFFSET:
        raise ValueError(f"{what}: {offset!r} is not an int offset in "
                         f"[-{MAX_OFFSET}, {MAX_OFFSET}].")
    return int(offset)


def _template_id(description):
    return stable_id("template|" + description)


class Template:
    """Base class: one template.

    Subclasses set ``n_slots`` and ``parts`` (the ``(source_key, offset)``
    pairs whose unit ids name a feature; empty if none), and implement
    :meth:`description`, :meth:`write_keys` and :meth:`name`.
    """

    n_slots = 1
    parts = ()

    def description(self):
        """A string that identifies the template (its id is a hash of it)."""
        raise NotImplementedError

    def write_keys(self, units, sources, source_row, keys, slot0):
        """Fill ``keys[:, slot0:slot0 + n_slots]`` for ``units``.

        ``sources`` is the (n_sources, n_tokens) id matrix of the sources every
        template of the set reads, ``source_row`` maps a source key to its row.
        """
        raise NotImplementedError

    def name(self, sub, values):
        """Readable name of the feature of slot ``sub`` whose parts read
        ``values`` (a str per part, or ``(side, distance)`` for padding)."""
        raise NotImplementedError

    def __eq__(self, other):
        return type(self) is type(other) and self.description() == other.description()

    def __hash__(self):
        return hash(self.description())

    def __repr__(self):
        return f"{type(self).__name__}({self.description()!r})"


def _default_padding(source_key, side, d):
    if source_key[0] == "type":
        return "<s>" if side < 0 else "</s>"
    return f"<s-{d}>" if side < 0 else f"</s+{d}>"


class Window(Template):
    """Units read at several offsets combined into one feature.

    Parameters
    ----------
    parts : sequence of (source_key, offset)
        What to read: e.g. ``(("col", 0), -1)`` is the unit before the
        current one. No parts: a constant feature (bias).
    pieces : sequence of str or int
        The feature name: literal strings, and part indices replaced by what
        the part read, e.g. ``["C[-1]C[0]=", 0, "", 1]``.
    padding : callable, default=None
        ``padding(source_key, side, distance) -> str`` names padding units;
        default ``<s-1>`` / ``</s+1>`` (``<s>`` / ``</s>`` for types).
    key : str, default=None
        Identifies the template (hashed into its feature keys); default from
        the parts and pieces.
    """

    def __init__(self, parts, pieces, padding=None, key=None):
        self.parts = tuple((tuple(src), check_offset(off, "template offset"))
                           for src, off in parts)
        self.pieces = tuple(pieces)
        self.padding = padding
        self.key = key

    def description(self):
        if self.key is not None:
            return self.key
        return "window|" + repr(self.parts) + "|" + repr(self.pieces)

    def write_keys(self, units, sources, source_row, keys, slot0):
        src = np.array([source_row[s] for s, _ in self.parts], dtype=np.int64)
        off = np.array([o for _, o in self.parts], dtype=np.int64)
        H.window_keys(sources, units.offsets, src, off, _template_id(self.description()),
                      keys, slot0)

    def read_ids(self, units, sources, source_row, rows):
        """The unit ids each part read at token ``rows`` (n_rows, n_parts)."""
        out = np.zeros((rows.size, len(self.parts)), dtype=np.int64)
        if self.parts and rows.size:
            src = np.array([source_row[s] for s, _ in self.parts], dtype=np.int64)
            off = np.array([o for _, o in self.parts], dtype=np.int64)
            H.window_ids(sources, units.offsets, rows, sequence_of(units.offsets, rows),
                         src, off, out)
        return out

    def name(self, sub, values):
        pad = self.padding or _default_padding
        out = []
        for p in self.pieces:
            if isinstance(p, str):
                out.append(p)
                continue
            v = values[p]
            out.append(v if isinstance(v, str) else pad(self.parts[p][0], *v))
        return "".join(out)


class DictionaryMatches(Template):
    """Dictionary matches at every position (character input).

    For every dictionary word found in the text (every match, not greedy
    maximum matching; never across sequences), the positions it covers get
    "a word of length k begins / ends / passes through here" features;
    lengths from ``max_len`` up share one feature.
    """

    _PARTS = ("begin", "end", "mid")

    def __init__(self, words, max_len):
        bad = [w for w in words if not isinstance(w, str)]
        if bad:
            raise TypeError(f"dictionary entries must be str, got {bad[0]!r}.")
        words = sorted({w for w in words if w})
        self.max_len = int(max_len)
        self.n_slots = 3 * self.max_len
        self.n_words = len(words)
        self.table = H.new_table(sum(len(w) for w in words), width=2)
        if words:
            cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"),
                                dtype=np.uint32).astype(np.int64)
            wl = np.array([len(w) for w in words], dtype=np.int64)
            H.hash_words(cps, np.concatenate([[0], np.cumsum(wl)]), self.table)
        # identify by content, so that equal dictionaries give equal keys
        self._digest = stable_id("\n".join(words))

    def description(self):
        return f"dictionary|{self.max_len}|{self._digest:x}"

    def write_keys(self, units, sources, source_row, keys, slot0):
        if units.kind != "chars":
            raise ValueError("dictionary features need character input (each "
                             "sequence a str); got token sequences.")
        flags = np.zeros((units.n_tokens, self.n_slots), dtype=np.int8)
        H.dictionary_flags(units.ids[0], units.offsets, self.table, self.max_len, flags)
        tids = np.array([_template_id(f"{self.description()}|{k}")
                         for k in range(self.n_slots)], dtype=np.int64)
        H.flag_keys(flags, tids, keys, slot0)

    def name(self, sub, values):
        k, part = divmod(sub, 3)
        return f"dict_{self._PARTS[part]}_len{k + 1}"


class TemplateSet:
    """Templates laid out in consecutive key slots.

    Parameters
    ----------
    templates : list of Template
    """

    def __init__(self, templates):
        self.templates = list(templates)
        sizes = [t.n_slots for t in self.templates]
        self.slot0 = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
        self.n_slots = int(self.slot0[-1])
        keys = []
        for t in self.templates:
            for src, _ in t.parts:
                if src not in keys:
                    keys.append(src)
        self.source_keys = keys
        self.n_parts = max([len(t.parts) for t in self.templates] + [0])

    def _sources(self, units):
        return (units.source_matrix(self.source_keys),
                {k: i for i, k in enumerate(self.source_keys)})

    def keys(self, units):
        """Feature keys of every token and slot, (n_tokens, n_slots) uint64 (0: none)."""
        keys = np.zeros((units.n_tokens, self.n_slots), dtype=np.uint64)
        sources, row = self._sources(units)
        for t, s0 in zip(self.templates, self.slot0[:-1]):
            t.write_keys(units, sources, row, keys, int(s0))
        return keys

    def locate(self, slots):
        """Template index and slot within it of each global slot."""
        tpl = np.searchsorted(self.slot0, slots, side="right") - 1
        return tpl, slots - self.slot0[tpl]

    def unit_codes(self, units, rows, slots):
        """What each feature read, as codes into a table of readable strings.

        For features first seen at token ``rows`` in ``slots``, returns
        ``(codes, strings)``: ``codes`` (n, n_parts) int32 where a value
        ``c >= 0`` is ``strings[c]``, ``-d`` is padding ``d`` units before the
        sequence and ``-(MAX_OFFSET + d)`` padding ``d`` units after it.
        Only the strings of these features are kept.
        """
        n = rows.size
        codes = np.zeros((n, self.n_parts), dtype=np.int32)
        src_of = np.full((n, self.n_parts), -1, dtype=np.int64)
        ids = np.zeros((n, self.n_parts), dtype=np.int64)
        sources, row = self._sources(units)
        tpl, _ = self.locate(slots)
        for i, t in enumerate(self.templates):
            if not t.parts:
                continue
            sel = np.flatnonzero(tpl == i)
            if not sel.size:
                continue
            ids[sel, :len(t.parts)] = t.read_ids(units, sources, row, rows[sel])
            src_of[sel, :len(t.parts)] = [self.source_keys.index(s) for s, _ in t.parts]
        strings = []
        real = (src_of >= 0) & (ids < H.PAD) & (ids != ABSENT)
        for k, key in enumerate(self.source_keys):
            mine = real & (src_of == k)
            if not mine.any():
                continue
            uniq, inv = np.unique(ids[mine], return_inverse=True)
            codes[mine] = len(strings) + inv.reshape(-1)
            strings.extend(units.describe(key, uniq.tolist()))
        pad = (src_of >= 0) & (ids >= H.PAD)
        d = ids[pad] - H.PAD            # 1..MAX_OFFSET before, MAX_OFFSET+1.. after
        codes[pad] = -d
        return codes, strings

    def names(self, slots, codes, strings):
        """Readable names of features (a Python loop per feature: on demand only)."""
        tpl, sub = self.locate(slots)
        out = []
        for i, s, row in zip(tpl.tolist(), sub.tolist(), codes.tolist()):
            t = self.templates[i]
            values = [strings[c] if c >= 0 else padding_of(H.PAD - c)
                      for c in row[:len(t.parts)]]
            out.append(t.name(s, values))
        return out
