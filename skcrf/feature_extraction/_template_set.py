"""A set of templates laid out in key slots: all keys of a text, numbered
into columns (fit) or looked up (transform), and readable feature names.

:class:`TemplateSet` computes every template's keys (all window templates in
one compiled pass), numbers them without building the whole key matrix
(:meth:`TemplateSet.index`, with the n-grams that several window templates
read at shifted offsets numbered once: :class:`_SharedGrams`), and names
features from what each read. NumPy only at import; the compiled kernels
come through :func:`._templates._kernels`.
"""

import numpy as np

from ._sources import describe, source_matrix
from ._templates import _NO_VALUE, CodedTemplate, Template, Window, _kernels, _template_id
from ._units import ABSENT, MAX_OFFSET, PAD, padding_of


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
    (:func:`~skcrf.feature_extraction._hashing.pair_ids`); longer n-grams (members at
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
        return (source_matrix(units, self.source_keys),
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
        """The :class:`~skcrf.feature_extraction._hashing.KeyIndex` of the keys that
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
                for i, text in zip(at.tolist(), describe(units, key, u_id[at].tolist())):
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
