"""Everything a model file says, checked before anything uses it.

:func:`check_part` and :func:`check_segmenter` stand between a file's
metadata and arrays (as :func:`~._model_file.read_model_file` read them) and
every kernel: each array against the metadata (shape, index ranges, finite
values, CSR structure), the metadata against its schema (types, ranges,
allow-lists of fitted attributes and parameters), and the memory that dense
weights would take against what the file declares. Every failure is a
:class:`~skcrf.exceptions.ModelFileError` naming the file and the entry.
NumPy only.
"""

import math

import numpy as np

from .._arrays import aligned_zeros
from .._constraints import constraint_masks
from ..exceptions import ModelFileError
from ..feature_extraction._vocabulary import FittedVocabulary

__all__ = ["check_top", "check_part", "check_known_words", "FITTED_TYPES"]

#: the LinearChainCRF attributes a file may record besides its weights, and
#: their JSON types (an allow-list: loading sets these and nothing else)
FITTED_TYPES = {"n_iter_": int, "objective_": float, "stop_reason_": str,
                "n_params_": int, "n_nonzero_": int}
_TOP_KEYS = {"format", "format_version", "skcrf_version", "kind", "labels", "crf",
             "featurizer", "segmenter", "oov_model"}
_PART_KEYS = {"labels", "crf", "featurizer"}
_MAX_LABELS = 1 << 16
#: dense weights (features x labels) may take this many times the bytes the
#: file declares, or this many bytes, whichever is larger: a sparse model of
#: many labels needs more than it stores, a crafted one far more
_DENSE_FACTOR = 8
_DENSE_FLOOR = 256 * 2**20


def _fail(path, entry, what):
    raise ModelFileError(f"{path}: entry {entry!r}: {what}")


def check_top(path, meta):
    """The file's kind, and no key the format does not have."""
    unknown = sorted(set(meta) - _TOP_KEYS)
    if unknown:
        _fail(path, "__meta__", f"unknown key {unknown[0]!r}.")
    if meta.get("kind") not in ("tagger", "segmenter"):
        _fail(path, "__meta__", f"kind {meta.get('kind')!r} is not 'tagger' or 'segmenter'.")
    if meta["kind"] == "tagger" and ("segmenter" in meta or "oov_model" in meta):
        _fail(path, "__meta__", "a tagger has no segmenter entries.")
    if "oov_model" in meta and meta["format_version"] < 2:
        _fail(path, "__meta__", "an OOV model needs format_version 2.")
    if meta["kind"] == "segmenter" and not isinstance(meta.get("segmenter"), dict):
        _fail(path, "segmenter", "a segmenter's parameters must be a JSON object.")


def check_part(path, meta, arrays, prefix, declared):
    """``(labels, vocabulary, (W, A, start, end), decoding)`` of one model part
    (prefix ``""`` or ``"oov."``), everything checked."""
    where = prefix.rstrip(".") or "__meta__"
    keys = set(meta) if isinstance(meta, dict) else set()
    if not (_PART_KEYS <= keys and (not prefix or keys == _PART_KEYS)):
        _fail(path, where, f"a model part holds exactly {sorted(_PART_KEYS)}.")
    labels = _labels(path, meta["labels"], prefix + "labels")
    decoding = _crf_meta(path, meta["crf"], prefix + "crf")
    if not isinstance(meta["featurizer"], dict):
        _fail(path, prefix + "featurizer", "must be a JSON object.")
    own = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)
           and (prefix or not k.startswith("oov."))}
    try:
        vocab = FittedVocabulary.from_state(meta["featurizer"], own)
    except KeyError as exc:
        _fail(path, prefix + str(exc.args[0]), "missing.")
    except (TypeError, ValueError) as exc:
        _fail(path, prefix + "featurizer", str(exc))
    n_templates = len(vocab.templates.templates)
    for name in own:
        if name.startswith("template") and int(name[8:].split(".")[0]) >= n_templates:
            _fail(path, prefix + name, f"there are only {n_templates} templates.")
    weights = _weights(path, own, prefix, vocab.n_features, len(labels), declared)
    _forbidden(path, meta["crf"]["params"].get("constraints"), labels, weights[1:], prefix)
    return labels, vocab, weights, decoding


def _labels(path, labels, entry):
    if not isinstance(labels, list) or not 1 <= len(labels) <= _MAX_LABELS:
        _fail(path, entry, f"must be a list of 1 to {_MAX_LABELS} labels.")
    kinds = {type(lab) for lab in labels}
    if not (kinds == {str} or kinds == {int}):
        _fail(path, entry, "labels must be all str or all int.")
    if len(set(labels)) != len(labels):
        _fail(path, entry, "a label appears twice.")
    return labels


def _crf_meta(path, crf, entry):
    """The CRF's metadata: its parameters a JSON object, its fitted values
    of the allowed names and types; returns its decoding."""
    if not isinstance(crf, dict) or not isinstance(crf.get("params"), dict) \
            or not isinstance(crf.get("fitted", {}), dict):
        _fail(path, entry, "must hold 'params' and 'fitted' objects.")
    for k, v in crf.get("fitted", {}).items():
        want = FITTED_TYPES.get(k)
        if want is None:
            _fail(path, entry + ".fitted", f"unknown fitted attribute {k!r}.")
        ok = isinstance(v, want) and not isinstance(v, bool) if want is not float \
            else isinstance(v, (int, float)) and not isinstance(v, bool)
        if not ok:
            _fail(path, entry + ".fitted", f"{k} must be {want.__name__}, got {v!r}.")
    decoding = crf["params"].get("decoding", "viterbi")
    if decoding not in ("viterbi", "marginal"):
        _fail(path, entry + ".params", f"decoding {decoding!r} is not 'viterbi' or "
                                       "'marginal'.")
    return decoding


def _weights(path, own, prefix, n_features, n_labels, declared):
    """The dense state weights from the CSR arrays, and the transitions."""
    for name in ("W_indptr", "W_indices", "W_data", "A", "start", "end"):
        if name not in own:
            _fail(path, prefix + name, "missing.")
    indptr, indices, data = own["W_indptr"], own["W_indices"], own["W_data"]
    L = n_labels
    _shape(path, prefix + "W_indptr", indptr, (n_features + 1,))
    _shape(path, prefix + "W_indices", indices, (indices.size,))
    _shape(path, prefix + "W_data", data, (indices.size,))
    if indptr[0] != 0 or indptr[-1] != indices.size or (np.diff(indptr) < 0).any():
        _fail(path, prefix + "W_indptr", "not the row pointers of its indices.")
    if indices.size and (indices.min() < 0 or indices.max() >= L):
        _fail(path, prefix + "W_indices", f"label index outside [0, {L}).")
    if indices.size > 1:
        row_start = np.zeros(indices.size, dtype=bool)
        row_start[indptr[:-1][np.diff(indptr) > 0]] = True
        if ((np.diff(indices) <= 0) & ~row_start[1:]).any():
            _fail(path, prefix + "W_indices", "labels not strictly increasing in a row.")
    if not np.isfinite(data).all():
        _fail(path, prefix + "W_data", "weights must be finite.")
    for name, shape in (("A", (L, L)), ("start", (L,)), ("end", (L,))):
        a = own[name]
        _shape(path, prefix + name, a, shape)
        if np.isnan(a).any() or np.isposinf(a).any():
            _fail(path, prefix + name, "weights must be finite or -inf (a forbidden "
                                       "transition).")
    need = n_features * L * 8
    if need > max(_DENSE_FACTOR * declared, _DENSE_FLOOR):
        _fail(path, prefix + "W_indptr", f"{n_features:,} features x {L:,} labels would "
              f"take {need / 2**20:,.0f} MiB as dense weights, more than this file's "
              "size warrants.")
    W = aligned_zeros((n_features, L))   # (rows on cache lines, as a fit leaves them)
    W[np.repeat(np.arange(n_features), np.diff(indptr)), indices] = data
    return W, own["A"], own["start"], own["end"]


def _forbidden(path, constraints, labels, transitions, prefix):
    """-inf weights exactly where the model's constraints forbid (a fit gives
    every other weight a finite value): a -inf anywhere else would change
    the output without being wrong in form."""
    try:
        masks = constraint_masks(constraints, np.asarray(labels))
    except (TypeError, ValueError) as exc:
        _fail(path, prefix + "crf.params", f"constraints: {exc}")
    for name, a, k in zip(("A", "start", "end"), transitions, range(3)):
        allowed = np.ones(a.shape, dtype=bool) if masks is None else masks[k]
        if (np.isneginf(a) != ~allowed).any():
            _fail(path, prefix + name, "-inf weights where the model's constraints do "
                                       "not forbid a transition, or finite ones where they do.")


def _shape(path, entry, a, shape):
    if a.shape != shape:
        _fail(path, entry, f"has shape {a.shape}; expected {shape}.")


def check_known_words(path, arrays):
    """The OOV model's known words, decoded."""
    for name in ("known_words", "known_word_lengths"):
        if name not in arrays:
            _fail(path, name, "missing.")
        if arrays[name].ndim != 1:
            _fail(path, name, "must be 1-D.")
    data, lengths = arrays["known_words"], arrays["known_word_lengths"]
    if (lengths < 0).any() or int(lengths.sum()) != data.size:
        _fail(path, "known_word_lengths", "lengths disagree with the text.")
    ends = np.cumsum(lengths)
    raw = data.tobytes()
    try:
        return frozenset(raw[e - n:e].decode("utf-8")
                         for e, n in zip(ends.tolist(), lengths.tolist()))
    except UnicodeDecodeError:
        _fail(path, "known_words", "not UTF-8 text.")


def check_segmenter(path, params):
    """The parameters a segmenter model file's runtime reads."""
    threshold = params.get("oov_threshold", 0.8)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
            or not (math.isfinite(threshold) and 0 <= threshold <= 1):
        _fail(path, "segmenter", f"oov_threshold {threshold!r} is not in [0, 1].")
    if not isinstance(params.get("merge_runs", False), bool):
        _fail(path, "segmenter", "merge_runs must be true or false.")
    return float(threshold), params.get("merge_runs", False)
