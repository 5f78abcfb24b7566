"""Feature templates as objects: what each reads, its keys, its feature names.

A template is evaluated at every position of every sequence and yields at
most one feature per *slot* (most templates have one slot). Its feature
*key* is a 64-bit hash of the template's id and of the unit ids it read, so a
feature is the same column wherever it occurs, in any process, on any shard.

* :class:`Window` reads units from sources (:mod:`._sources`) at any
  offsets, any number of them, any columns: ``C[-1]=上``, ``C[-1]C[0]=上海``,
  ``T[0]=digit``, ``lower=melbourne``, a CRF++ ``U`` line, a constant bias.
* more kinds, for Chinese word segmentation: :mod:`._dictionary` (dictionary
  matches, dictionary words), :mod:`._accessor_variety`, :mod:`._pmi`.

:class:`~._template_set.TemplateSet` lays templates out in slots, computes
all keys and names features. A new kind of template is a new subclass of
:class:`Template` plus a line in :data:`TEMPLATE_TYPES`.

NumPy only at import: the compiled kernels that compute keys
(:mod:`._hashing`, :mod:`._indexing`, :mod:`._window_keys`) are loaded by :func:`_kernels` the
first time keys are computed with them, so that the model files' NumPy
runtime can rebuild and name templates without Numba.
"""

from importlib import import_module
from types import SimpleNamespace

import numpy as np

from ._sources import check_source_key
from ._units import MAX_OFFSET, stable_id

__all__ = ["Template", "CodedTemplate", "Window", "TEMPLATE_TYPES", "PADDINGS",
           "check_offset", "crfpp_padding", "state_int", "template_from_state"]

#: bounds on what a saved template may say (far beyond any real setting)
MAX_DICTIONARY_LEN = 100
MAX_FOLDS = 1 << 20

#: every template type a model file may name: type name -> (module, class).
#: An allow-list: loading imports these modules and nothing else.
TEMPLATE_TYPES = {
    "window": ("._templates", "Window"),
    "dictionary": ("._dictionary", "DictionaryMatches"),
    "dictionary_words": ("._dictionary", "DictionaryWords"),
    "accessor_variety": ("._accessor_variety", "AccessorVariety"),
    "adjacent_pmi": ("._pmi", "AdjacentPMI"),
}

#: the compiled feature kernels (see :func:`_kernels`)
_KERNEL_MODULES = ("._hashing", "._indexing", "._window_keys")
_KERNELS = None


def _kernels():
    """The Numba feature kernels as one namespace, imported on first use
    (tagging a few sentences with NumPy alone never loads them)."""
    global _KERNELS
    if _KERNELS is None:
        names = {}
        for module in _KERNEL_MODULES:
            names.update(vars(import_module(module, __package__)))
        _KERNELS = SimpleNamespace(**names)
    return _KERNELS


def template_from_state(state, arrays):
    """A template from what its ``to_state`` returned; a ``ValueError`` for a
    type that :data:`TEMPLATE_TYPES` does not list."""
    kind = state.get("type") if isinstance(state, dict) else None
    if not isinstance(kind, str) or kind not in TEMPLATE_TYPES:
        raise ValueError(f"unknown template type {kind!r}.")
    module, name = TEMPLATE_TYPES[kind]
    return getattr(import_module(module, __package__), name).from_state(state, arrays)


def state_int(state, key, lo, hi, default=None):
    """``state[key]`` (a template's saved state), checked to be an int in
    [lo, hi]; ``default`` when absent (None: required). Digests, saved as
    decimal strings, are read with ``hi`` = 2**64."""
    v = state.get(key, default)
    if isinstance(v, str) and v.isdigit() and len(v) <= 20:
        v = int(v)
    if type(v) is not int or not lo <= v <= hi:
        raise ValueError(f"{key} must be an int in [{lo}, {hi}], got {v!r}.")
    return v


def crfpp_padding(source_key, side, distance):
    """Padding named as CRF++ names it: ``_B-1`` before the sequence, ``_B+1`` after."""
    return f"_B-{distance}" if side < 0 else f"_B+{distance}"


#: padding namers a :class:`Window` may name in a model file (by these names)
PADDINGS = {"_crfpp_padding": crfpp_padding}


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
        padding = None
        if self.padding is not None:
            padding = next(k for k, v in PADDINGS.items() if v is self.padding)
        return ({"type": self.type_name, "parts": [[list(s), o] for s, o in self.parts],
                 "pieces": list(self.pieces), "key": self.key, "padding": padding}, {})

    @classmethod
    def from_state(cls, state, arrays):
        padding = state.get("padding")
        if padding is not None and padding not in PADDINGS:
            raise ValueError(f"unknown padding {padding!r}.")
        parts = []
        for part in state["parts"]:
            if not isinstance(part, list) or len(part) != 2 or not isinstance(part[0], list):
                raise ValueError(f"malformed window part {part!r}.")
            src = tuple(part[0])
            check_source_key(src)
            parts.append((src, part[1]))
        pieces = state["pieces"]
        if not isinstance(pieces, list) or not all(
                isinstance(p, str) or (type(p) is int and 0 <= p < len(parts)) for p in pieces):
            raise ValueError(f"malformed window pieces {pieces!r}.")
        key = state.get("key")
        if key is not None and not isinstance(key, str):
            raise ValueError(f"malformed window key {key!r}.")
        return cls(parts, pieces, padding=PADDINGS.get(padding), key=key)

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
        from ._numpy_keys import window_keys

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
