"""The model file format: plain arrays and JSON in a zip, never pickle.

A model file is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays). Its array
``__meta__`` holds UTF-8 JSON:

``format`` / ``format_version``
    ``"skcrf-model"`` / 1 or 2.
``kind``
    ``"tagger"`` (a ``SequenceFeaturizer`` + ``LinearChainCRF`` pipeline) or
    ``"segmenter"`` (a ``WordSegmenter``).
``labels``
    The CRF's classes, in order.
``crf``
    ``params`` (its parameters) and ``fitted`` (``n_iter_``, ``objective_``,
    ``stop_reason_``, ``n_params_``, ``n_nonzero_``).
``featurizer``
    Input kind, number of token columns and of features, the templates
    (each ``{"type": ..., ...}``), the strings the feature names are made of
    (:meth:`~skcrf.feature_extraction.FittedVocabulary.to_state`), and
    ``params``, the featurizer's parameters.
``segmenter``
    The ``WordSegmenter`` parameters (segmenters only; ``unlabeled_text``
    and a user ``dictionary`` are not stored: their statistics and tables are).
``oov_model``
    A segmenter's OOV model (``WordSegmenter.oov_crf_``), when it has one:
    its own ``labels``, ``crf`` and ``featurizer`` entries, its arrays named
    as below with the prefix ``oov.``; the words it never proposes as new
    (``known_words_``) are the arrays ``known_words`` (UTF-8, concatenated)
    and ``known_word_lengths`` (bytes per word). Such files have
    ``format_version`` 2, so that a reader of version 1, which would segment
    without the OOV model, refuses them; every other file is version 1.

Arrays: ``W_data`` / ``W_indices`` / ``W_indptr`` (the state weights as a
CSR matrix, features x labels), ``A``, ``start``, ``end``; ``vocab_keys``
(uint64 feature keys, column order), ``feature_slots``, ``feature_codes``,
``feature_counts``; ``template<i>.table`` for templates that carry tables
(dictionary, accessor variety, PMI).

:func:`write_model_file` writes one atomically (a temporary file in the same
directory, then a rename) with the permissions the process's umask gives a
new file. :func:`read_model_file` reads one defensively, for files from
strangers: it names what a foreign file is (a pickle, a CRF++ or CRFsuite
model, a single ``.npy`` array) instead of guessing; refuses unknown or
repeated entries, entries whose declared size is implausible for their
compressed size, dtypes other than each entry's own, and metadata that is
too large or too deeply nested; and it never allocates an array before its
header and the zip directory agree on its size. Checking what the arrays
mean is :mod:`._validation`'s job. NumPy only.
"""

import json
import os
import re
import tempfile
import zipfile

import numpy as np

from .._version import __version__
from ..exceptions import ModelFileError

__all__ = ["FORMAT", "FORMAT_VERSION", "write_model_file", "read_model_file", "ENTRY_DTYPES"]

FORMAT, FORMAT_VERSION = "skcrf-model", 2

#: the arrays a model file may hold (``oov.`` prefix allowed on the part
#: arrays), each with the one dtype it is written with
ENTRY_DTYPES = {
    "W_data": np.float64, "W_indices": np.int64, "W_indptr": np.int64,
    "A": np.float64, "start": np.float64, "end": np.float64,
    "vocab_keys": np.uint64, "feature_slots": np.int32, "feature_codes": np.int32,
    "feature_counts": np.int64, "table": np.uint64,
    "known_words": np.uint8, "known_word_lengths": np.int64, "__meta__": np.uint8,
}
_PART = ("W_data", "W_indices", "W_indptr", "A", "start", "end", "vocab_keys",
         "feature_slots", "feature_codes", "feature_counts")
_ENTRY = re.compile(r"^(?:(?:oov\.)?(?:(?P<part>" + "|".join(_PART)
                    + r")|template(?P<tpl>0|[1-9][0-9]{0,4})\.table)"
                    + r"|(?P<top>known_words|known_word_lengths|__meta__))\.npy$")

#: an entry that declares more than this many bytes ...
_RATIO_MIN_BYTES = 16 * 2**20
#: ... may not declare more than this many times its compressed size (real
#: model arrays compress a few times; a block of zeros compresses ~1000x)
_MAX_RATIO = 100
#: the metadata JSON at most, and its nesting
_MAX_META_BYTES = 1 << 30
_MAX_DEPTH = 32


def write_model_file(path, meta, arrays):
    """Write ``meta`` (JSON-able) and ``arrays`` to ``path`` atomically."""
    arrays = dict(arrays)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"),
                                       dtype=np.uint8)
    return _write_atomically(path, lambda fh: np.savez_compressed(fh, **arrays))


def write_bytes_atomically(path, data):
    """Write ``data`` to ``path`` as model files are written (atomically)."""
    return _write_atomically(path, lambda fh: fh.write(data))


def _write_atomically(path, write):
    """``write(fh)`` into a temporary file beside ``path``, then rename it:
    an interrupted write never leaves a half-written model (or loses the old
    one); the file gets the usual permissions (0666 less the umask)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".skcrf-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# ------------------------------------------------------------------- read
def read_model_file(path):
    """``(meta, arrays, declared_bytes)`` of a model file.

    ``declared_bytes`` is the arrays' total size as the zip directory
    declares it (what later allocations may be compared with). Raises
    :class:`ModelFileError` naming the file (and the entry) when the file is
    missing, not an skcrf model file, or malformed.
    """
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file.") from None
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read ({exc.strerror or exc}).") from None
    with fh:
        head = fh.read(8)
        fh.seek(0)
        if not head.startswith(b"PK\x03\x04"):
            raise ModelFileError(f"{path}: {_foreign(head)}")
        try:
            with zipfile.ZipFile(fh) as z:
                return _read_zip(path, z)
        except ModelFileError:
            raise
        except zipfile.BadZipFile as exc:
            raise ModelFileError(f"{path}: not a readable model file: a damaged zip "
                                 f"archive ({exc}).") from None
        except (EOFError, OSError, ValueError) as exc:
            raise ModelFileError(f"{path}: not a readable model file (truncated or "
                                 f"corrupted: {exc}).") from None


def _foreign(head):
    """What a file that is not a zip archive is, as far as its first bytes say."""
    if head.startswith(b"lCRF"):
        what = ("a CRFsuite model file, not an skcrf model file (skcrf.load_model and "
                "the skcrf command line read both)")
    elif head.startswith(b"\x80") and len(head) > 1 and 2 <= head[1] <= 5:
        what = ("a Python pickle (or joblib) file, not an skcrf model file; skcrf "
                "model files hold arrays and JSON only, and skcrf never unpickles them")
    elif head[:2] in (b"\x78\x9c", b"\x78\x01", b"\x78\xda", b"\x1f\x8b", b"BZ") or \
            head.startswith(b"\xfd7zXZ"):
        what = ("a compressed file (a compressed pickle or joblib file?), not an skcrf "
                "model file")
    elif head.startswith(b"\x93NUMPY"):
        what = "a single NumPy array (.npy), not an skcrf model file (.npz archive)"
    elif head.startswith(b"version:") or head.startswith(b"d\x00\x00\x00"):
        what = "a CRF++ model file, not an skcrf model file"
    elif not head:
        what = "an empty file, not an skcrf model file"
    else:
        what = "not an skcrf model file (an skcrf model file is a zip archive of arrays)"
    return what + "."


def _read_zip(path, z):
    infos = z.infolist()
    seen = set()
    for info in infos:
        if info.filename in seen:
            raise ModelFileError(f"{path}: entry {info.filename!r} appears twice.")
        seen.add(info.filename)
        if not _ENTRY.match(info.filename):
            if not info.filename.endswith(".npy"):
                raise ModelFileError(f"{path}: not an skcrf model file (it holds "
                                     f"{info.filename!r}, which is not an array).")
            raise ModelFileError(f"{path}: unknown entry {info.filename!r}.")
        if info.file_size > _RATIO_MIN_BYTES and \
                info.file_size > _MAX_RATIO * max(info.compress_size, 1):
            raise ModelFileError(
                f"{path}: entry {info.filename!r} declares {info.file_size:,} bytes in "
                f"{info.compress_size:,} compressed: refused as implausible.")
    if "__meta__.npy" not in seen:
        raise ModelFileError(f"{path}: not an skcrf model file (no metadata).")
    by_name = {info.filename[:-4]: info for info in infos}
    meta = _read_meta(path, z, by_name.pop("__meta__"))
    arrays = {name: _read_array(path, z, info, name) for name, info in by_name.items()}
    declared = sum(info.file_size for info in infos)
    return meta, arrays, declared


def _read_meta(path, z, info):
    if info.file_size > _MAX_META_BYTES:
        raise ModelFileError(f"{path}: metadata of {info.file_size:,} bytes refused.")
    raw = _read_array(path, z, info, "__meta__")
    if raw.ndim != 1:
        raise ModelFileError(f"{path}: entry '__meta__' must be a 1-D byte array.")
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path}: not an skcrf model file (unreadable metadata: "
                             f"{exc}).") from None
    except RecursionError:
        raise ModelFileError(f"{path}: metadata nested too deeply.") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not an skcrf model file (its metadata does not "
                             f"say format {FORMAT!r}).")
    if _depth(meta) > _MAX_DEPTH:
        raise ModelFileError(f"{path}: metadata nested more than {_MAX_DEPTH} deep.")
    version = meta.get("format_version")
    if type(version) is not int or version < 1:
        raise ModelFileError(f"{path}: entry '__meta__': format_version {version!r} is "
                             "not a positive int.")
    if version > FORMAT_VERSION:
        raise ModelFileError(f"{path}: model format version {version} is newer than "
                             f"this skcrf ({__version__}) reads; upgrade.")
    return meta


def _depth(obj):
    """Nesting depth of JSON data (iterative: a crafted file cannot recurse)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        deepest = max(deepest, d)
        if d > _MAX_DEPTH:
            break
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return deepest


def _read_array(path, z, info, name):
    """One ``.npy`` entry, checked against the zip directory before any
    allocation: its header's dtype must be the entry's own, its size what
    the directory declares."""
    key = name.split(".")[-1]
    want = np.dtype(ENTRY_DTYPES[key])
    with z.open(info) as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except ValueError as exc:
            raise ModelFileError(f"{path}: entry {name!r} is not a readable array "
                                 f"({exc}).") from None
        if dtype != want:
            raise ModelFileError(f"{path}: entry {name!r} has dtype {dtype}; expected "
                                 f"{want}.")
        count = 1
        for n in shape:
            count *= n
        nbytes = count * want.itemsize
        if nbytes > info.file_size:
            raise ModelFileError(f"{path}: entry {name!r} claims shape {shape}, more than "
                                 f"its {info.file_size:,} bytes.")
        out = np.empty(shape, dtype=want, order="F" if fortran else "C")
        view = memoryview(out.reshape(-1, order="A")).cast("B") if count else b""
        got = f.readinto(view) if count else 0
        if got != nbytes:
            raise ModelFileError(f"{path}: entry {name!r} is truncated.")
        if f.read(1):
            raise ModelFileError(f"{path}: entry {name!r} holds more than its shape "
                                 f"{shape}.")
    return np.ascontiguousarray(out)
