"""CRF++ model files (written by ``crf_learn``), read and tagged as ``crf_test`` does.

Two forms, both read:

* text (``crf_learn -t`` writes ``model.txt``): a header of ``key: value``
  lines (``version``, ``cost-factor``, ``maxid``, ``xsize``), then blocks
  separated by blank lines — the labels, the templates, the features
  (``id name``: feature ``name`` owns weights ``id .. id + L - 1``, or
  ``id .. id + L*L - 1`` for a bigram feature, indexed ``prev * L + cur``),
  then ``maxid`` weights, one a line;
* binary (the default ``model``): little-endian ``version`` (100), a type,
  ``cost_factor`` (float64), ``maxid``, ``xsize``, the size of the feature
  trie, then the labels and the templates as zero-separated strings (each
  block prefixed by its padded size), the trie — a Darts double array of
  (base int32, check uint32) units mapping feature names to ids — and
  ``maxid`` float32 weights.

``crf_test`` scores label y at token t with ``cost_factor`` times the sum of
``w[id_f + y]`` over the unigram features f the templates produce at t (a
macro ``%x[row,col]`` reads column ``col`` of token ``t + row``; outside the
sentence ``_B-1``, ``_B-2``, ... before it and ``_B+1``, ... after it), and
each transition with ``cost_factor * w[id_B + prev * L + cur]``. Here the
unigram features' weight rows become a state weight matrix and the ``B``
feature the transition matrix, decoded by skcrf's one decoding path
(:mod:`skcrf._inference`). Bigram templates with macros (transitions that
depend on the input) are refused: skcrf has no such features.

Every size, id and count is checked against the file before it is used: a
truncated or crafted file raises :class:`~skcrf.exceptions.ModelFileError`
naming the file, never a crash or an allocation the file does not warrant.
NumPy only.
"""

import re
import struct
from array import array

import numpy as np

from .._arrays import KernelArrays, Weights
from .._inference import marginals, predict_indices, topk_sequences, viterbi
from ..exceptions import ModelFileError

__all__ = ["CRFppModel", "read_crfpp"]

_MACRO = re.compile(r"%x\[\s*(-?\d+)\s*,\s*(\d+)\s*\]")
_HEADER = struct.Struct("<IidIII")           # version, type, cost_factor, maxid, xsize, dsize
#: CRF++'s limit on a macro's row offset (kMaxContextSize)
_MAX_ROW = 8
_MAX_COLUMNS = 10_000
_MAX_TEMPLATES = 10_000
#: as for skcrf's own model files: every decoding array is (tokens x labels)
_MAX_LABELS = 1 << 16


class CRFppModel:
    """A CRF++ model: tags column data as ``crf_test`` does.

    Sequences are lists of tokens, each a sequence of at least ``n_columns``
    strings (the columns the templates read; more are ignored).

    Attributes
    ----------
    labels : list of str
    n_columns : int
        CRF++'s ``xsize``: the feature columns of the training data.
    templates : list of str
        The unigram templates (``U...`` lines).
    cost_factor : float
    """

    kind = "tagger"
    input_kind = "tokens"
    decoding = "viterbi"
    oov = None

    def __init__(self, labels, templates, cost_factor, n_columns, lookup, alpha, path):
        self.labels = list(labels)
        self.n_columns = int(n_columns)
        self.cost_factor = float(cost_factor)
        self.path = path
        self._lookup = lookup                 # feature name -> id (or None)
        self._alpha = alpha                   # the weights, float64
        self.templates = []
        self._parts = []
        L = len(self.labels)
        bigram_id = None
        for tmpl in templates:
            if tmpl.startswith("B"):
                if _MACRO.search(tmpl):
                    raise ModelFileError(
                        f"{path}: bigram template {tmpl!r} reads the input: transitions "
                        "that depend on the input are not supported by skcrf (only a "
                        "plain 'B' line).")
                bigram_id = lookup(tmpl)
                continue
            self.templates.append(tmpl)
            self._parts.append(_template_parts(tmpl, self.n_columns, path))
        A = np.zeros((L, L))
        if bigram_id is not None:
            A = alpha[bigram_id:bigram_id + L * L].reshape(L, L) * self.cost_factor
        self._A = A

    @property
    def classes_(self):
        return np.asarray(self.labels)

    # ------------------------------------------------------------ features
    def arrays(self, X):
        """Kernel arrays and state weights of sequences of column tuples:
        the unigram features found in the model, numbered in order of first
        appearance, with their weight rows (times the cost factor)."""
        indptr, indices, ids, seen, lengths = [0], [], [], {}, []
        lookup, L = self._lookup, len(self.labels)
        for seq in X:
            seq = [tuple(tok) for tok in seq]
            for tok in seq:
                if len(tok) < self.n_columns:
                    raise ValueError(f"a token has {len(tok)} column(s); the model reads "
                                     f"{self.n_columns}.")
            T = len(seq)
            for t in range(T):
                for parts in self._parts:
                    name = "".join(p if p.__class__ is str else _cell(seq, t + p[0], p[1], T)
                                   for p in parts)
                    fid = lookup(name)
                    if fid is not None:
                        k = seen.get(fid)
                        if k is None:
                            k = seen[fid] = len(ids)
                            ids.append(fid)
                        indices.append(k)
                indptr.append(len(indices))
            lengths.append(T)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        rows = np.asarray(ids, dtype=np.int64)
        W = self._alpha[rows[:, None] + np.arange(L)] * self.cost_factor
        arrays = KernelArrays(np.asarray(indptr, dtype=np.int64),
                              np.asarray(indices, dtype=np.int32), np.ones(1), offsets)
        return arrays, Weights.from_arrays(W.reshape(len(ids), L), self._A, np.zeros(L),
                                           np.zeros(L))

    def _labelled(self, idx, offsets):
        labels = np.asarray(self.labels, dtype=object)[idx].tolist()
        off = offsets.tolist()
        return [labels[a:b] for a, b in zip(off[:-1], off[1:])]

    # ------------------------------------------------------------ tagging
    def predict(self, X, n_threads=1, engine="numpy"):
        """Label lists (Viterbi, as ``crf_test``)."""
        arrays, weights = self.arrays(list(X))
        idx = predict_indices(arrays, weights, "viterbi", n_threads, engine)
        return self._labelled(idx, arrays.offsets)

    def predict_with_probabilities(self, X, n_threads=1, engine="numpy"):
        """``(labels, log P(labels | x), marginals)`` per sequence (``crf_test -v1/-v2``)."""
        arrays, weights = self.arrays(list(X))
        idx, score = viterbi(arrays, weights, n_threads, engine)
        P, log_z = marginals(arrays, weights, n_threads, engine)
        off = arrays.offsets
        return [(labels, float(score[s] - log_z[s]), P[off[s]:off[s + 1]])
                for s, labels in enumerate(self._labelled(idx, off))]

    def predict_marginals(self, X):
        """Per sequence, per token, ``{label: probability}``."""
        return [[dict(zip(self.labels, row)) for row in P.tolist()]
                for _, _, P in self.predict_with_probabilities(X)]

    def topk(self, X, k, n_threads=1):
        """The k best label sequences of each input: lists of ``(labels, log_prob)``
        (``crf_test -n``)."""
        arrays, weights = self.arrays(list(X))
        return topk_sequences(arrays, weights, k, n_threads, labels=self.labels)

    predict_topk = topk


def _cell(seq, r, col, T):
    if r < 0:
        return f"_B{r}"
    if r >= T:
        return f"_B+{r - T + 1}"
    return seq[r][col]


def _template_parts(tmpl, n_columns, path):
    """Literal strings and (row, col) macros of a unigram template."""
    parts, pos = [], 0
    for m in _MACRO.finditer(tmpl):
        if m.start() > pos:
            parts.append(tmpl[pos:m.start()])
        row, col = int(m.group(1)), int(m.group(2))
        if abs(row) > _MAX_ROW or col >= n_columns:
            raise ModelFileError(f"{path}: template {tmpl!r}: %x[{row},{col}] is out of "
                                 f"range (rows -{_MAX_ROW}..{_MAX_ROW}, {n_columns} "
                                 "column(s)).")
        parts.append((row, col))
        pos = m.end()
    if pos < len(tmpl):
        parts.append(tmpl[pos:])
    if any(p.__class__ is str and "%" in p for p in parts):
        raise ModelFileError(f"{path}: template {tmpl!r}: only %x[row,col] macros are "
                             "supported.")
    return parts


# ------------------------------------------------------------------- read
def read_crfpp(data, path="<crf++ model>"):
    """The :class:`CRFppModel` of a CRF++ model file's bytes (text or binary)."""
    if data.startswith(b"version:"):
        return _read_text(data, path)
    return _read_binary(data, path)


def _fail(path, what):
    raise ModelFileError(f"{path}: not a readable CRF++ model ({what}).")


def _check_common(path, version, maxid, xsize, labels, templates, size_bound):
    if version // 100 != 1:
        _fail(path, f"version {version}, skcrf reads version 100")
    if not labels or len(set(labels)) != len(labels):
        _fail(path, "no labels, or a label twice")
    if len(labels) > _MAX_LABELS:
        _fail(path, f"{len(labels):,} labels, more than skcrf decodes ({_MAX_LABELS:,})")
    if not 1 <= xsize <= _MAX_COLUMNS:
        _fail(path, f"xsize {xsize}")
    if len(templates) > _MAX_TEMPLATES:
        _fail(path, f"{len(templates)} templates")
    bad = [t for t in templates if t[:1] not in ("U", "B")]
    if bad:
        _fail(path, f"template {bad[0][:40]!r} is neither U (unigram) nor B (bigram)")
    if not 0 < maxid <= size_bound:
        _fail(path, f"maxid {maxid} for a file of this size")


def _read_text(data, path):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(path, f"not UTF-8 text at byte {exc.start}")
    blocks = text.split("\n\n")
    if len(blocks) < 5:
        _fail(path, "fewer than the five blank-line separated blocks of a text model")
    header = {}
    for line in blocks[0].splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            _fail(path, f"header line {line[:40]!r}")
        header[key.strip()] = value.strip()
    try:
        version = int(header["version"])
        cost = float(header.get("cost-factor", "1"))
        maxid = int(header["maxid"])
        xsize = int(header["xsize"])
    except (KeyError, ValueError) as exc:
        _fail(path, f"header: {exc}")
    labels = blocks[1].splitlines()
    templates = [t for t in blocks[2].splitlines() if t.strip()]
    # each weight takes a line of two bytes or more
    _check_common(path, version, maxid, xsize, labels, templates, len(data) // 2)
    if not np.isfinite(cost) or cost <= 0:
        _fail(path, f"cost-factor {cost}")
    features = {}
    for line in blocks[3].splitlines():
        fid, sep, name = line.partition(" ")
        if not sep or not fid.isdigit() or len(fid) > 18:
            _fail(path, f"feature line {line[:40]!r}")
        features[name] = int(fid)
    weights = "\n".join(blocks[4:]).split()
    if len(weights) != maxid:
        _fail(path, f"{len(weights)} weights, maxid says {maxid}")
    try:
        alpha = np.array(weights, dtype=np.float64)
    except ValueError:
        _fail(path, "a weight is not a number")
    return _model(labels, templates, cost, xsize, features.get, features.values(), alpha,
                  path)


def _model(labels, templates, cost, xsize, lookup, ids, alpha, path):
    if not np.isfinite(alpha).all():
        _fail(path, "a weight is NaN or infinite")
    L, maxid = len(labels), alpha.size
    bigram = [t for t in templates if t.startswith("B")]
    if ids is not None:                    # (a text model lists its features)
        ids = np.fromiter(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() + L > maxid):
            _fail(path, "a feature id beyond maxid")
    b = lookup("B") if bigram == ["B"] else None
    if b is not None and not 0 <= b <= maxid - L * L:
        _fail(path, "the bigram feature's id beyond maxid")
    return CRFppModel(labels, templates, cost, xsize, _checked(lookup, maxid - L), alpha,
                      path)


def _checked(lookup, last):
    """``lookup``, with ids outside ``0 .. last`` (a crafted trie) as misses."""
    def get(name):
        fid = lookup(name)
        return fid if fid is not None and 0 <= fid <= last else None
    return get


def _read_binary(data, path):
    if len(data) < _HEADER.size + 8:
        _fail(path, "shorter than its header")
    version, _type, cost, maxid, xsize, dsize = _HEADER.unpack_from(data, 0)
    pos = _HEADER.size

    def block(pos):
        if pos + 4 > len(data):
            _fail(path, "truncated")
        (n,) = struct.unpack_from("<I", data, pos)
        if n > len(data) - pos - 4:
            _fail(path, "truncated (a string block runs past the end)")
        return data[pos + 4:pos + 4 + n], pos + 4 + n

    ystr, pos = block(pos)
    tstr, pos = block(pos)
    try:
        labels = [s.decode("utf-8") for s in ystr.split(b"\0") if s]
        templates = [s.decode("utf-8") for s in tstr.split(b"\0") if s]
    except UnicodeDecodeError:
        _fail(path, "a label or template is not UTF-8")
    _check_common(path, version, maxid, xsize, labels, templates, len(data) // 4)
    if not np.isfinite(cost) or cost <= 0:
        _fail(path, f"cost-factor {cost}")
    if dsize % 8 or pos + dsize + 4 * maxid != len(data):
        _fail(path, f"{len(data)} bytes, the header says {pos + dsize + 4 * maxid}")
    units = np.frombuffer(data, dtype=[("base", "<i4"), ("check", "<u4")],
                          count=dsize // 8, offset=pos)
    alpha = np.frombuffer(data, dtype="<f4", count=maxid,
                          offset=pos + dsize).astype(np.float64)
    return _model(labels, templates, cost, xsize, _DoubleArray(units).get, None, alpha,
                  path)


class _DoubleArray:
    """Exact-match look-up in a Darts double array (CRF++'s feature trie):
    from the root's base, each byte c of the key moves to unit
    ``base + c + 1`` if that unit's check is the current base; the key's
    value is ``-base - 1`` of the unit at the final base, when negative.
    Every index is checked against the array; results are memoised."""

    def __init__(self, units):
        # compact arrays that index to Python ints (4 bytes a unit, where
        # lists would take about 36)
        self.base = array("i", units["base"].astype(np.intc).tobytes())
        self.check = array("I", units["check"].astype(np.uintc).tobytes())
        self.n = len(self.base)
        self.memo = {}

    def get(self, name):
        hit = self.memo.get(name, self)
        if hit is not self:
            return hit
        fid = self._search(name.encode("utf-8"))
        if len(self.memo) < 1 << 22:
            self.memo[name] = fid
        return fid

    def _search(self, key):
        base, check, n = self.base, self.check, self.n
        if not n:
            return None
        b = base[0]
        for c in key:
            p = b + c + 1
            if not 0 <= p < n or check[p] != b:
                return None
            b = base[p]
        if not 0 <= b < n or check[b] != b:
            return None
        v = base[b]
        return -v - 1 if v < 0 else None
