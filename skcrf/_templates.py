"""Feature templates as objects: what each reads, its keys, its feature names.

A template is evaluated at every position of every sequence and yields at
most one feature per *slot* (most templates have one slot). Its feature
*key* is a 64-bit hash of the template's id and of the unit ids it read, so a
feature is the same column wherever it occurs, in any process, on any shard.

* :class:`Window` reads units from sources (:mod:`skcrf._units`) at any
  offsets, any number of them, any columns: ``C[-1]=上``, ``C[-1]C[0]=上海``,
  ``T[0]=digit``, ``lower=melbourne``, a CRF++ ``U`` line, a constant bias.
* more kinds elsewhere: :mod:`skcrf._cws_features` (dictionary matches,
  accessor variety).

:class:`TemplateSet` lays templates out in slots, computes all keys, and
names features. A new kind of template is a new subclass of
:class:`Template`; the others do not change.
"""

from importlib import import_module

import numpy as np

from . import _units
from ._units import ABSENT, MAX_OFFSET, PAD, padding_of, stable_id

__all__ = ["Template", "CodedTemplate", "Window", "TemplateSet", "check_offset",
           "register_template", "template_from_state"]

# template type name -> class, for model files (see to_state / from_state)
_TEMPLATE_TYPES = {}


def register_template(cls):
    """Class decorator: make a template type loadable from a model file."""
    _TEMPLATE_TYPES[cls.type_name] = cls
    return cls


def _kernels():
    """The Numba feature kernels, imported on first use (tagging a few
    sentences with NumPy alone, see :mod:`skcrf._numpy_tagger`, never loads them)."""
    return import_module("._feature_hashing", __package__)


def template_from_state(state, arrays):
    """A template from what its ``to_state`` returned."""
    if state.get("type") not in _TEMPLATE_TYPES or any(
            tuple(src)[0] not in _units.base_source_kinds() for src, _ in state.get("parts", ())):
        import_module("._cws_features", __package__)   # registers its templates and sources
    cls = _TEMPLATE_TYPES.get(state.get("type"))
    if cls is None:
        raise ValueError(f"unknown template type {state.get('type')!r} in the model file.")
    return cls.from_state(state, arrays)


def check_offset(offset, what):
    """An int offset in [-MAX_OFFSET, MAX_OFFSET], or a ValueError naming ``what``."""
    if isinstance(offset, (bool, np.bool_)) or not isinstance(offset, (int, np.integer)) \
            or abs(int(offset)) > MAX_OFFSET:
        raise ValueError(f"{what}: {offset!r} is not an int offset in "
                         f"[-{MAX_OFFSET}, {MAX_OFFSET}].")
    return int(offset)


_NO_VALUE = np.iinfo(np.int32).min   # a feature code where a template reads nothing


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
    type_name = None
    writes_every_key = False    # True: write_keys writes 0 where there is no feature

    def to_state(self):
        """``(json_dict, arrays)`` that :meth:`from_state` rebuilds the template
        from (model files: plain JSON and arrays, no pickle)."""
        raise NotImplementedError

    @classmethod
    def from_state(cls, state, arrays):
        raise NotImplementedError

    def feature_values(self, units, rows, subs, keys=None):
        """For a template without ``parts`` whose features carry a value (a bin,
        say): the value of the features first seen at token ``rows`` in slots
        ``subs`` (their keys: ``keys``, when known), as strings for their
        names; None when there is none."""
        return None

    def description(self):
        """A string that identifies the template (its id is a hash of it)."""
        raise NotImplementedError

    def keys_numpy(self, units, sources, source_row):
        """Its keys (n_tokens, n_slots) computed with NumPy alone, equal to
        what :meth:`write_keys` writes. Optional: a template that does not
        override it has no NumPy version (then tagging uses the Numba kernels)."""
        raise NotImplementedError

    def write_keys(self, units, sources, source_row, keys, slot0, fitting=False):
        """Fill ``keys[:, slot0:slot0 + n_slots]`` for ``units``.

        ``sources`` is the (n_sources, n_tokens) id matrix of the sources every
        template of the set reads, ``source_row`` maps a source key to its row.
        ``fitting`` is True for the training data (a template may then compute
        its features differently, e.g. jackknifed).
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
    if source_key[0] == "type" and d == 1:      # T[-1]=<s>, T[1]=</s>
        return "<s>" if side < 0 else "</s>"
    return f"<s-{d}>" if side < 0 else f"</s+{d}>"


class CodedTemplate(Template):
    """A template with few possible features per slot (at most 255), which
    writes each token's feature of each slot as a small *code*: 0 for none,
    ``c`` for the feature whose key is ``code_keys()[slot, c]``.

    Numbering codes needs no hashing (a look-up in an array of 256 entries
    per slot) and a uint8 buffer instead of uint64 keys, so
    :meth:`TemplateSet.index` numbers these templates from their codes;
    :meth:`write_keys` (prediction) maps the same codes to the same keys.
    Subclasses implement :meth:`write_codes` and :meth:`code_keys`.
    """

    writes_every_key = True

    def code_keys(self):
        """(n_slots, n_codes) uint64: the key of code c in each slot (column 0,
        code 0 = no feature, is unused)."""
        raise NotImplementedError

    def write_codes(self, units, sources, source_row, codes, fitting=False):
        """Fill ``codes`` (n_tokens, n_slots) uint8, zeros on entry, with the
        code of every token's feature in each slot (0: none)."""
        raise NotImplementedError

    def write_keys(self, units, sources, source_row, keys, slot0, fitting=False):
        codes = np.zeros((units.n_tokens, self.n_slots), dtype=np.uint8, order="F")
        self.write_codes(units, sources, source_row, codes, fitting=fitting)
        _kernels().codes_to_keys(codes, self.code_keys(), keys, slot0)


@register_template
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
        default ``<s-1>`` / ``</s+1>`` (``<s>`` / ``</s>`` for types one unit out).
    key : str, default=None
        Identifies the template (hashed into its feature keys); default from
        the parts and pieces.
    """

    type_name = "window"
    writes_every_key = True

    def __init__(self, parts, pieces, padding=None, key=None):
        self.parts = tuple((tuple(src), check_offset(off, "template offset"))
                           for src, off in parts)
        self.pieces = tuple(pieces)
        self.padding = padding
        self.key = key

    def to_state(self):
        padding = None if self.padding is None else self.padding.__name__
        return ({"type": self.type_name, "parts": [[list(s), o] for s, o in self.parts],
                 "pieces": list(self.pieces), "key": self.key, "padding": padding}, {})

    @classmethod
    def from_state(cls, state, arrays):
        padding = None
        if state.get("padding"):
            from . import _crfpp

            padding = getattr(_crfpp, state["padding"])
        return cls([(tuple(s), o) for s, o in state["parts"]], state["pieces"],
                   padding=padding, key=state.get("key"))

    def description(self):
        if self.key is not None:
            return self.key
        return "window|" + repr(self.parts) + "|" + repr(self.pieces)

    def _parts_arrays(self, source_row):
        src = np.array([source_row[s] for s, _ in self.parts], dtype=np.int64)
        off = np.array([o for _, o in self.parts], dtype=np.int64)
        return src, off

    def write_keys(self, units, sources, source_row, keys, slot0, fitting=False):
        src, off = self._parts_arrays(source_row)
        _kernels().window_keys(sources, units.offsets, src, off,
                               _template_id(self.description()), keys, slot0)

    def keys_numpy(self, units, sources, source_row):
        from ._numpy_tagger import window_keys

        src, off = self._parts_arrays(source_row)
        return window_keys(sources, units.offsets, src, off,
                           _template_id(self.description()))[:, None]

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


class _SharedGrams:
    """The n-grams that several window templates read at shifted offsets
    (``C[-2]C[-1]``, ``C[-1]C[0]``, ``C[0]C[1]``, ``C[1]C[2]``: the same
    character pairs), numbered once for all of them.

    Window templates are grouped by what they read relative to their first
    part (sources and offsets minus the first offset); a group of members at
    two or more offsets numbers its n-grams at every extended position of the
    text (the positions its members read, padding included) once, and each
    member then takes the n-gram ids at its own shift and the keys of those
    n-grams under its own template id. Numbering a column of keys costs a
    hash-table probe per token (~30-45 ns for ~10^5 distinct pairs); a member
    costs a gather and a look-up in an array of n-gram ids.

    Units and pairs (one or two parts; numbered this way even for a single
    template) need no hashing of n-grams at all: each source's units get
    dense ids once (a few thousand distinct characters: a small table), and
    the pairs of dense ids are numbered by a counting sort on the first
    (:func:`~skcrf._feature_hashing.pair_ids`); longer n-grams (members at
    two offsets or more) hash the tuple of their dense ids.
    """

    def __init__(self, templates, units, sources, row):
        self.units, self.sources, self.row = units, sources, row
        self._dense_ids = {}        # source row -> its units' dense ids and values
        groups = {}
        for t in templates:
            if type(t) is Window and t.parts:
                groups.setdefault(self._signature(t), []).append(t)
        # shared by members at two offsets or more; a unit or pair template is
        # numbered this way even alone (from dense ids: no hashing)
        self.groups = {sig: None for sig, members in groups.items()
                       if len({m.parts[0][1] for m in members}) > 1 or len(sig) <= 2}
        self.bounds = {sig: (min(m.parts[0][1] for m in groups[sig]),
                             max(m.parts[0][1] for m in groups[sig])) for sig in self.groups}

    @staticmethod
    def _signature(t):
        base = t.parts[0][1]
        return tuple((src, off - base) for src, off in t.parts)

    def has(self, t):
        return type(t) is Window and bool(t.parts) and self._signature(t) in self.groups

    def _numbered(self, sig):
        """(n-gram id of every extended position, the units each n-gram reads).

        Each part's units as dense ids (a source's units numbered once: a few
        thousand distinct characters, a small table), read at every extended
        position; then units by their dense id, pairs by a counting sort of
        the pairs of ids, longer n-grams by a hash table of the tuples of ids."""
        if self.groups[sig] is None:
            H = _kernels()
            lo, hi = self.bounds[sig]
            n_ext = self.units.n_tokens + self.units.n_sequences * (hi - lo)
            ext = np.empty((len(sig), n_ext), dtype=np.int32)
            n_ids, unit_of = [], []
            for k, (src, rel) in enumerate(sig):
                ids, values = self._dense(self.row[src])
                H.ext_dense(ids, values.size, self.units.offsets, rel, lo, hi, ext[k])
                n_ids.append(values.size + 2 * MAX_OFFSET)
                # the unit of each dense id: the values, then the padding ids
                unit_of.append(np.concatenate([values, PAD + np.arange(1, MAX_OFFSET + 1),
                                               PAD + MAX_OFFSET + np.arange(1, MAX_OFFSET + 1)]))
            if len(sig) == 1:
                gram_id, at = H.unary_ids(ext[0], n_ids[0])
            elif len(sig) == 2:
                gram_id, at = H.pair_ids(ext[0], ext[1], n_ids[0], n_ids[1])
            else:
                keys = np.empty(n_ext, dtype=np.uint64)
                H.tuple_keys(ext, keys)
                numbering = H.SlotIndexer(n_ext, 1)
                numbering.add(keys, 0)
                gram_id = numbering.ids[:, 0]
                at = numbering.first[:numbering.n_ent]
            # at: an extended position of each n-gram, where its units are read
            gram_units = np.stack([unit_of[k][ext[k][at]] for k in range(len(sig))], axis=1)
            self.groups[sig] = (gram_id, gram_units)
        return self.groups[sig]

    def _dense(self, src):
        """(dense id of every token's unit in source row ``src``, -1 for ABSENT;
        the unit of each dense id), numbered once per source."""
        if src not in self._dense_ids:
            numbering = _kernels().SlotIndexer(self.units.n_tokens, 1)
            numbering.add(self.sources[src].view(np.uint64), 0)    # ABSENT (0): none
            self._dense_ids[src] = (numbering.ids[:, 0],
                                    numbering.ent_keys[:numbering.n_ent].astype(np.int64))
        return self._dense_ids[src]

    def add_member(self, t, indexer, s):
        """Number member ``t``'s features into slot ``s`` of ``indexer``: the
        n-gram ids at its shift, read straight from the extended positions."""
        H = _kernels()
        sig = self._signature(t)
        gram_id, gram_units = self._numbered(sig)
        lo, hi = self.bounds[sig]
        keys = np.empty(gram_units.shape[0], dtype=np.uint64)
        H.member_keys(gram_units, _template_id(t.description()), keys)
        indexer.add_ids(gram_id, keys, s, offsets=self.units.offsets, width=hi - lo,
                        shift=t.parts[0][1] - lo)


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
        self.n_parts = max([len(t.parts) for t in self.templates] + [1])

    def _sources(self, units):
        return (units.source_matrix(self.source_keys),
                {k: i for i, k in enumerate(self.source_keys)})

    def keys(self, units, fitting=False):
        """Feature keys of every token and slot, (n_tokens, n_slots) uint64 (0: none)."""
        keys = np.zeros((units.n_tokens, self.n_slots), dtype=np.uint64)
        sources, row = self._sources(units)
        windows = [j for j, t in enumerate(self.templates) if type(t) is Window]
        if len(windows) > 1:                # all window templates in one pass
            n = max(len(self.templates[j].parts) for j in windows)
            src = np.zeros((len(windows), max(n, 1)), dtype=np.int64)
            off = np.zeros_like(src)
            n_parts = np.zeros(len(windows), dtype=np.int64)
            for i, j in enumerate(windows):
                s, o = self.templates[j]._parts_arrays(row)
                src[i, :s.size], off[i, :s.size], n_parts[i] = s, o, s.size
            tids = np.array([_template_id(self.templates[j].description())
                             for j in windows], dtype=np.int64)
            _kernels().windows_keys(sources, units.offsets, src, off, n_parts, tids,
                                    self.slot0[windows], keys)
        done = set(windows) if len(windows) > 1 else set()
        for j, (t, s0) in enumerate(zip(self.templates, self.slot0[:-1])):
            if j not in done:
                t.write_keys(units, sources, row, keys, int(s0), fitting=fitting)
        return keys

    def index(self, units, fitting=False):
        """The :class:`~skcrf._feature_hashing.KeyIndex` of the keys that
        :meth:`keys` gives, without the whole key matrix: each template's keys
        are written into a buffer of its own slots and numbered right away."""
        H = _kernels()
        # templates hash their own ids into their keys: distinct templates,
        # distinct keys in every slot (the same template twice shares keys)
        descriptions = [t.description() for t in self.templates]
        coded = np.repeat([isinstance(t, CodedTemplate) for t in self.templates],
                          [t.n_slots for t in self.templates])
        indexer = H.SlotIndexer(units.n_tokens, self.n_slots,
                                disjoint_slots=len(set(descriptions)) == len(descriptions),
                                coded_slots=coded)
        sources, row = self._sources(units)
        width = max([t.n_slots for t in self.templates
                     if not isinstance(t, CodedTemplate)] + [1])
        buffer = np.empty((units.n_tokens, width), dtype=np.uint64, order="F")
        shared = _SharedGrams(self.templates, units, sources, row)
        for t, s0 in zip(self.templates, self.slot0[:-1].tolist()):
            if shared.has(t):
                shared.add_member(t, indexer, s0)
                continue
            if isinstance(t, CodedTemplate):
                # written straight into the indexer's columns of codes
                c0 = int(indexer.slot_col[s0])
                codes = indexer.codes[:, c0:c0 + t.n_slots]
                codes[:] = 0
                t.write_codes(units, sources, row, codes, fitting=fitting)
                code_keys = t.code_keys()
                for k in range(t.n_slots):
                    indexer.add_codes(codes[:, k], code_keys[k], s0 + k)
                continue
            block = buffer[:, :t.n_slots]
            if not t.writes_every_key:
                block[:] = 0
            t.write_keys(units, sources, row, block, 0, fitting=fitting)
            for k in range(t.n_slots):
                indexer.add(block[:, k], s0 + k)
        return indexer.finish()

    @property
    def has_numpy(self):
        """True if every template can compute its keys with NumPy alone."""
        return all(type(t).keys_numpy is not Template.keys_numpy for t in self.templates)

    def keys_numpy(self, units):
        """:meth:`keys` computed with NumPy alone (only when :attr:`has_numpy`)."""
        if not self.has_numpy:
            raise ValueError("a template of this set has no NumPy version.")
        sources, row = self._sources(units)
        cols = [t.keys_numpy(units, sources, row) for t in self.templates]
        if not cols:
            return np.zeros((units.n_tokens, 0), dtype=np.uint64)
        return np.ascontiguousarray(np.concatenate(cols, axis=1))

    def locate(self, slots):
        """Template index and slot within it of each global slot."""
        tpl = np.searchsorted(self.slot0, slots, side="right") - 1
        return tpl, slots - self.slot0[tpl]

    def unit_codes(self, units, rows, slots, keys=None):
        """What each feature read, as codes into a table of readable strings.

        For features first seen at token ``rows`` in ``slots``, returns
        ``(codes, strings)``: ``codes`` (n, n_parts) int32 where a value
        ``c >= 0`` is ``strings[c]``, ``-d`` is padding ``d`` units before the
        sequence and ``-(MAX_OFFSET + d)`` padding ``d`` units after it.
        Only the strings of these features are kept. ``keys``, the features'
        keys, lets a template name a feature by what it wrote rather than by
        re-reading the text (a jackknifed template read other statistics).
        """
        n = rows.size
        codes = np.full((n, self.n_parts), _NO_VALUE, dtype=np.int32)
        sources, row = self._sources(units)
        n_tpl = len(self.templates)
        tpl = np.repeat(np.arange(n_tpl, dtype=np.int16 if n_tpl < 2 ** 15 else np.int64),
                        np.diff(self.slot0))[slots]
        # what every slot reads: (source row, offset) per part; -1: no part
        slot_src = np.full((self.n_slots, self.n_parts), -1, dtype=np.int64)
        slot_off = np.zeros((self.n_slots, self.n_parts), dtype=np.int64)
        for i, t in enumerate(self.templates):
            a, b = self.slot0[i], self.slot0[i + 1]
            for k, (src, off) in enumerate(t.parts):
                slot_src[a:b, k], slot_off[a:b, k] = self.source_keys.index(src), off
        # the ids every feature read (its template's parts), in one compiled pass
        ids = np.zeros((n, self.n_parts), dtype=np.int64)
        src_of = np.empty((n, self.n_parts), dtype=np.int64)
        if n:
            seq = np.repeat(np.arange(units.n_sequences, dtype=np.int64),
                            np.diff(units.offsets))[rows]
            _kernels().feature_ids(sources, units.offsets, rows, seq, slots, slot_src,
                                   slot_off, ids, src_of)
        # the features of each template: one stable (radix) sort by template
        order = np.argsort(tpl, kind="stable")
        bounds = np.searchsorted(tpl[order], np.arange(n_tpl + 1))
        by_template = [order[bounds[i]:bounds[i + 1]] for i in range(n_tpl)]
        strings = []
        for i, t in enumerate(self.templates):
            sel = by_template[i] if not t.parts else np.zeros(0, np.int64)
            values = t.feature_values(units, rows[sel], slots[sel] - self.slot0[i],
                                      keys=None if keys is None else keys[sel]) \
                if sel.size else None
            if values is not None:
                table = {}
                for j, v in zip(sel.tolist(), values):
                    if v not in table:
                        table[v] = len(strings)
                        strings.append(v)
                    codes[j, 0] = table[v]
        # every distinct (source, id) read gets a string, numbered in order of
        # first appearance; padding reads get -d (compiled: one hash table)
        base = len(strings)
        u_src, u_id = _kernels().unit_codes(ids, src_of, np.int64(PAD), np.int64(ABSENT),
                                            base, codes)
        new = [None] * u_src.size
        for k, key in enumerate(self.source_keys):
            at = np.flatnonzero(u_src == k)
            if at.size:
                for i, text in zip(at.tolist(), units.describe(key, u_id[at].tolist())):
                    new[i] = text
        strings.extend(new)
        return codes, strings

    def names(self, slots, codes, strings):
        """Readable names of features (a Python loop per feature: on demand only)."""
        tpl, sub = self.locate(slots)
        out = []
        for i, s, row in zip(tpl.tolist(), sub.tolist(), codes.tolist()):
            t = self.templates[i]
            values = [strings[c] if c >= 0 else padding_of(PAD - c)
                      for c in row if c != _NO_VALUE]
            out.append(t.name(s, values))
        return out
