"""CRFsuite model files (``crf1d``, as CRFsuite 0.12 writes them), read and written.

The layout (little-endian throughout): a 48-byte header (``lCRF``, file size,
``FOMC``, version 100, numbers of features, labels and attributes, and the
offsets of five chunks); a feature chunk (``FEAT``: per feature its type — 0
a state feature (attribute -> label), 1 a transition (label -> label) — its
source, destination and float64 weight); two CQDB chunks (constant quark
databases: string <-> id, with 256 hash tables hashed by Bob Jenkins'
lookup3 and a backward array id -> string) for the labels and the
attributes; and two reference chunks (``LFRF``, ``AFRF``) listing each
label's transitions and each attribute's state features. CRFsuite has no
start / end weights. Only features of non-zero weight are stored, and only
attributes that have one.

:func:`read_crfsuite` parses a file defensively (every offset, count and
length checked against the file before it is used: a crafted file gives a
:class:`~skcrf.exceptions.ModelFileError`, never a crash or an unbounded
allocation); :func:`write_crfsuite` writes one that CRFsuite itself reads.
NumPy only.
"""

import struct
from dataclasses import dataclass

import numpy as np

from ..exceptions import ModelFileError

__all__ = ["CRFsuiteFile", "read_crfsuite", "write_crfsuite", "hashlittle"]

_MAGIC, _TYPE, _VERSION = b"lCRF", b"FOMC", 100
_HEADER = struct.Struct("<4sI4sIIIIIIIII")          # 48 bytes
_CHUNK = struct.Struct("<4sII")                      # id, size, num: 12 bytes
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])
_CQDB_HEADER = struct.Struct("<4sIIIII")             # 24 bytes
_CQDB_TABLES = 256
_CQDB_DATA = _CQDB_HEADER.size + 8 * _CQDB_TABLES    # 2072: first record
_BYTEORDER = 0x62445371


@dataclass
class CRFsuiteFile:
    """What a CRFsuite model file holds.

    ``labels`` and ``attributes`` (str, in id order); state features as
    parallel arrays ``state_attr``, ``state_label``, ``state_weight``;
    transitions as ``trans_from``, ``trans_to``, ``trans_weight``;
    ``header``: the file header's fields.
    """

    labels: list
    attributes: list
    state_attr: np.ndarray
    state_label: np.ndarray
    state_weight: np.ndarray
    trans_from: np.ndarray
    trans_to: np.ndarray
    trans_weight: np.ndarray
    header: dict

    def transition_matrix(self):
        """Transition weights as an (L, L) array (0 where none is stored)."""
        L = len(self.labels)
        A = np.zeros((L, L))
        A[self.trans_from, self.trans_to] = self.trans_weight
        return A


# ------------------------------------------------------------------- read
def read_crfsuite(data, name="<crfsuite model>"):
    """The :class:`CRFsuiteFile` in ``data`` (the file's bytes)."""
    buf = memoryview(data).cast("B")
    size = len(buf)

    def fail(what):
        raise ModelFileError(f"{name}: not a readable CRFsuite model file ({what}).")

    if size < _HEADER.size:
        fail("shorter than its header")
    (magic, fsize, mtype, version, n_feat, n_labels, n_attrs, off_feat, off_labels,
     off_attrs, off_lrefs, off_arefs) = _HEADER.unpack_from(buf, 0)
    if magic != _MAGIC or mtype != _TYPE:
        fail("wrong magic or model type")
    if version != _VERSION:
        fail(f"version {version}; this reader knows {_VERSION}")
    if fsize != size:
        fail(f"the header says {fsize:,} bytes, the file has {size:,}: truncated?")
    header = dict(size=fsize, version=version, num_features=n_feat, num_labels=n_labels,
                  num_attrs=n_attrs)
    # features
    chunk_id, chunk_size, num = _chunk(buf, off_feat, fail)
    # (CRFsuite leaves the header's feature count at 0: the chunk's is the count)
    if chunk_id != b"FEAT" or chunk_size != _CHUNK.size + _FEATURE.itemsize * num \
            or off_feat + chunk_size > size:
        fail("a malformed feature chunk")
    feats = np.frombuffer(buf, dtype=_FEATURE, count=num, offset=off_feat + _CHUNK.size)
    labels = _cqdb_strings(buf, off_labels, n_labels, fail, "labels")
    attrs = _cqdb_strings(buf, off_attrs, n_attrs, fail, "attributes")
    types, src, dst = feats["type"], feats["src"], feats["dst"]
    weight = feats["weight"].astype(np.float64)
    if ((types != 0) & (types != 1)).any():
        fail("a feature of unknown type")
    state = types == 0
    if (dst >= max(n_labels, 1)).any() or (src[~state] >= max(n_labels, 1)).any() \
            or (src[state] >= max(n_attrs, 1)).any() or (n_labels == 0 and num):
        fail("a feature refers to a label or attribute that does not exist")
    if not np.isfinite(weight).all():
        fail("a non-finite weight")
    # the reference chunks must be where the header says (their content is
    # derived from the features, which is all tagging needs)
    for off, cid in ((off_lrefs, b"LFRF"), (off_arefs, b"AFRF")):
        got_id, got_size, _ = _chunk(buf, off, fail)
        if got_id != cid or off + got_size > size:
            fail(f"a malformed {cid.decode()} chunk")
    return CRFsuiteFile(
        labels=labels, attributes=attrs,
        state_attr=src[state].astype(np.int64), state_label=dst[state].astype(np.int64),
        state_weight=weight[state], trans_from=src[~state].astype(np.int64),
        trans_to=dst[~state].astype(np.int64), trans_weight=weight[~state], header=header)


def _chunk(buf, off, fail):
    if not 0 < off <= len(buf) - _CHUNK.size:
        fail("a chunk offset outside the file")
    return _CHUNK.unpack_from(buf, off)


def _cqdb_strings(buf, off, n, fail, what):
    """The ``n`` strings of the CQDB chunk at ``off``, by id (its backward
    array: id -> record)."""
    if not 0 < off <= len(buf) - _CQDB_DATA:
        fail(f"the {what} database lies outside the file")
    cid, csize, _, order, bwd_size, bwd_off = _CQDB_HEADER.unpack_from(buf, off)
    if cid != b"CQDB" or order != _BYTEORDER or off + csize > len(buf) or csize < _CQDB_DATA:
        fail(f"a malformed {what} database")
    if n == 0:
        return []
    if bwd_off == 0 or bwd_size < n or bwd_off + 4 * n > csize:
        fail(f"the {what} database has no id -> string array for its {n:,} entries")
    chunk = np.frombuffer(buf, dtype=np.uint8, count=csize, offset=off)
    recs = np.frombuffer(buf, dtype="<u4", count=n, offset=off + bwd_off).astype(np.int64)
    if (recs < _CQDB_DATA).any() or (recs + 8 > csize).any():
        fail(f"a {what} record outside its database")
    k = recs[:, None] + np.arange(8)
    words = chunk[k].view("<u4").reshape(n, 2).astype(np.int64)
    ids, ksize = words[:, 0], words[:, 1]
    if (ids != np.arange(n)).any():
        fail(f"the {what} database's ids disagree with its records")
    starts = recs + 8
    if (ksize < 1).any() or (starts + ksize > csize).any():
        fail(f"a {what} string outside its database")
    raw = chunk.tobytes()
    out = []
    for s, k_ in zip(starts.tolist(), ksize.tolist()):
        b = raw[s:s + k_ - 1]
        if raw[s + k_ - 1] != 0:
            fail(f"a {what} string without its terminating NUL")
        out.append(b.decode("utf-8", "surrogateescape"))
    return out


# ------------------------------------------------------------------ write
def write_crfsuite(labels, attributes, state, transitions):
    """The bytes of a CRFsuite model file.

    Parameters
    ----------
    labels, attributes : list of str
    state : (attr, label, weight) arrays
        State features; those of weight 0 are left out, as are attributes
        left without any (CRFsuite's own writer does the same).
    transitions : (from, to, weight) arrays
        Transition features (weight 0 left out).
    """
    a, sl, sw = (np.asarray(x) for x in state)
    tf, tt, tw = (np.asarray(x) for x in transitions)
    keep, keep_t = sw != 0, tw != 0
    a, sl, sw = a[keep], sl[keep], sw[keep]
    tf, tt, tw = tf[keep_t], tt[keep_t], tw[keep_t]
    # attributes renumbered in order of their first active feature; features:
    # each attribute's state features, then the transitions
    order = np.lexsort((sl, a))
    a, sl, sw = a[order], sl[order], sw[order]
    used, new_id = np.unique(a, return_inverse=True)
    t_order = np.lexsort((tt, tf))
    tf, tt, tw = tf[t_order], tt[t_order], tw[t_order]
    L, B = len(labels), used.size
    feats = np.zeros(sw.size + tw.size, dtype=_FEATURE)
    feats["type"][sw.size:] = 1
    feats["src"] = np.concatenate([new_id, tf])
    feats["dst"] = np.concatenate([sl, tt])
    feats["weight"] = np.concatenate([sw, tw])
    out = bytearray(_HEADER.size)
    off_feat = len(out)
    out += _CHUNK.pack(b"FEAT", _CHUNK.size + feats.nbytes, feats.size) + feats.tobytes()
    off_labels = len(out)
    out += _cqdb([str(x) for x in labels])
    off_attrs = len(out)
    out += _cqdb([str(attributes[i]) for i in used.tolist()])
    n_state = sw.size
    # label refs: each label's transitions (CRFsuite reserves L + 2 slots)
    off_lrefs = _align(out)
    per_label = np.searchsorted(tf, np.arange(L + 1))
    out += _refs(off_lrefs, b"LFRF", L + 2,
                 [np.arange(n_state + per_label[i], n_state + per_label[i + 1])
                  for i in range(L)])
    off_arefs = _align(out)
    per_attr = np.searchsorted(new_id, np.arange(B + 1))
    out += _refs(off_arefs, b"AFRF", B, [np.arange(per_attr[i], per_attr[i + 1]) for i in range(B)])
    # the header's feature count stays 0, as CRFsuite writes it
    _HEADER.pack_into(out, 0, _MAGIC, len(out), _TYPE, _VERSION, 0, L, B,
                      off_feat, off_labels, off_attrs, off_lrefs, off_arefs)
    return bytes(out)


def _align(out):
    while len(out) % 4:
        out.append(0)
    return len(out)


def _refs(start, cid, num, lists):
    """A reference chunk at file offset ``start``: ``num`` offsets (absolute,
    in the file), then each list (count, feature ids)."""
    head = _CHUNK.size + 4 * num
    offsets = np.zeros(num, dtype="<u4")
    body = bytearray()
    for i, ids in enumerate(lists):
        offsets[i] = start + head + len(body)
        body += struct.pack("<I", ids.size) + ids.astype("<u4").tobytes()
    base = bytearray(_CHUNK.pack(cid, head + len(body), num)) + offsets.tobytes()
    return base + body


def _cqdb(strings):
    """A CQDB chunk mapping ``strings[i]`` <-> ``i``, as CRFsuite writes it."""
    keys = [s.encode("utf-8", "surrogateescape") + b"\x00" for s in strings]
    n = len(keys)
    records = bytearray()
    rec_off = np.zeros(n, dtype=np.int64)
    for i, k in enumerate(keys):
        rec_off[i] = _CQDB_DATA + len(records)
        records += struct.pack("<iI", i, len(k)) + k
    hashes = hashlittle(keys)
    table_of = hashes % _CQDB_TABLES
    tables = bytearray()
    refs = np.zeros((_CQDB_TABLES, 2), dtype="<u4")
    cur = _CQDB_DATA + len(records)
    for t in range(_CQDB_TABLES):
        members = np.flatnonzero(table_of == t)
        if members.size == 0:
            continue
        m = 2 * members.size
        bucket = np.zeros((m, 2), dtype="<u4")
        for j in members.tolist():
            k = int(hashes[j] >> 8) % m
            while bucket[k, 1] != 0:
                k = (k + 1) % m
            bucket[k] = (hashes[j], rec_off[j])
        refs[t] = (cur + len(tables), m)
        tables += bucket.tobytes()
    bwd_size = n
    bwd_off = cur + len(tables) if n else 0
    bwd = rec_off.astype("<u4").tobytes()
    size = _CQDB_DATA + len(records) + len(tables) + len(bwd)
    head = _CQDB_HEADER.pack(b"CQDB", size, 0, _BYTEORDER, bwd_size, bwd_off)
    return head + refs.tobytes() + bytes(records) + bytes(tables) + bwd


# ---------------------------------------------------------- lookup3 hash
_M32 = np.uint64(0xFFFFFFFF)


def _rot(x, k):
    return ((x << np.uint64(k)) | (x >> np.uint64(32 - k))) & _M32


def _mix(a, b, c):
    a = (a - c) & _M32; a ^= _rot(c, 4); c = (c + b) & _M32        # noqa: E702
    b = (b - a) & _M32; b ^= _rot(a, 6); a = (a + c) & _M32        # noqa: E702
    c = (c - b) & _M32; c ^= _rot(b, 8); b = (b + a) & _M32        # noqa: E702
    a = (a - c) & _M32; a ^= _rot(c, 16); c = (c + b) & _M32       # noqa: E702
    b = (b - a) & _M32; b ^= _rot(a, 19); a = (a + c) & _M32       # noqa: E702
    c = (c - b) & _M32; c ^= _rot(b, 4); b = (b + a) & _M32        # noqa: E702
    return a, b, c


def _final(a, b, c):
    c ^= b; c = (c - _rot(b, 14)) & _M32                           # noqa: E702
    a ^= c; a = (a - _rot(c, 11)) & _M32                           # noqa: E702
    b ^= a; b = (b - _rot(a, 25)) & _M32                           # noqa: E702
    c ^= b; c = (c - _rot(b, 16)) & _M32                           # noqa: E702
    a ^= c; a = (a - _rot(c, 4)) & _M32                            # noqa: E702
    b ^= a; b = (b - _rot(a, 14)) & _M32                           # noqa: E702
    c ^= b; c = (c - _rot(b, 24)) & _M32                           # noqa: E702
    return a, b, c


def hashlittle(keys, initval=0):
    """Bob Jenkins' lookup3 ``hashlittle`` of each byte string, vectorised
    over the strings (uint32 array): the hash CQDB files use."""
    n = len(keys)
    out = np.zeros(n, dtype=np.uint64)
    lengths = np.fromiter(map(len, keys), dtype=np.int64, count=n)
    for length in np.unique(lengths).tolist():
        idx = np.flatnonzero(lengths == length)
        blocks = max(1, -(-length // 12))
        raw = np.zeros((idx.size, blocks * 12), dtype=np.uint8)
        if length:
            raw[:, :length] = np.frombuffer(b"".join(keys[i] for i in idx.tolist()),
                                            dtype=np.uint8).reshape(idx.size, length)
        words = raw.view("<u4").astype(np.uint64).reshape(idx.size, blocks, 3)
        a = b = c = np.full(idx.size, (0xDEADBEEF + length + initval) & 0xFFFFFFFF,
                            dtype=np.uint64)
        if length == 0:
            out[idx] = c
            continue
        rest = length
        k = 0
        while rest > 12:
            a = (a + words[:, k, 0]) & _M32
            b = (b + words[:, k, 1]) & _M32
            c = (c + words[:, k, 2]) & _M32
            a, b, c = _mix(a, b, c)
            rest -= 12
            k += 1
        a = (a + words[:, k, 0]) & _M32
        b = (b + words[:, k, 1]) & _M32
        c = (c + words[:, k, 2]) & _M32
        a, b, c = _final(a, b, c)
        out[idx] = c
    return out.astype(np.uint32)
