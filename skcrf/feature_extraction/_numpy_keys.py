"""Window-template keys and the vocabulary look-up with NumPy alone.

The same keys and columns as the compiled kernels (:mod:`._window_keys`,
:mod:`._hashing`): the same hash (:func:`splitmix`) in wrapping uint64
arithmetic, so that the model files' runtime can featurise a few sentences
without loading Numba.
"""

import numpy as np

from .._arrays import token_positions
from ._units import ABSENT, MAX_OFFSET, PAD, SPLITMIX_GOLD, SPLITMIX_M1, SPLITMIX_M2

_M1, _M2, _GOLD = np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2), np.uint64(SPLITMIX_GOLD)

_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)


def splitmix(x):
    """SplitMix64 finaliser of a uint64 array (wrapping arithmetic), as
    ``skcrf.feature_extraction._hashing._splitmix``."""
    x = x + _GOLD
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


def window_keys(sources, offsets, part_src, part_off, tid):
    """Keys of one window template, (n_tokens,) uint64, 0 where a part reads
    ABSENT: what ``_feature_hashing.window_keys`` writes into its slot."""
    n = int(offsets[-1])
    with np.errstate(over="ignore"):
        h = np.full(n, splitmix(np.array([tid], dtype=np.uint64))[0], dtype=np.uint64)
        if n == 0:
            return h
        seq, T, pos = token_positions(offsets)
        start = offsets[:-1][seq]
        absent = np.zeros(n, dtype=bool)
        for src, off in zip(part_src.tolist(), part_off.tolist()):
            p = pos + off
            inside = np.clip(start + p, 0, n - 1)
            u = np.where(p < 0, PAD - p,
                         np.where(p >= T, PAD + MAX_OFFSET + (p - T + 1),
                                  sources[src][inside]))
            absent |= u == ABSENT
            h = splitmix(h ^ u.astype(np.uint64))
    h[h == 0] = 1
    h[absent] = 0
    return h


class SortedVocabulary:
    """Feature keys -> columns by binary search (no hash table to build)."""

    def __init__(self, vocab_keys):
        self.order = np.argsort(vocab_keys, kind="stable")
        self.sorted = vocab_keys[self.order]

    def csr(self, keys):
        """CSR ``(indptr, indices)`` of the known keys of each row of ``keys``
        (n_rows, n_slots), in slot order: as ``_feature_hashing.keys_to_csr``."""
        n_rows = keys.shape[0]
        flat = keys.reshape(-1)
        if self.sorted.size:
            where = np.minimum(np.searchsorted(self.sorted, flat), self.sorted.size - 1)
            known = (flat != 0) & (self.sorted[where] == flat)
        else:
            where = np.zeros(flat.size, dtype=np.int64)
            known = np.zeros(flat.size, dtype=bool)
        indices = self.order[where[known]].astype(np.int32)
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(known.reshape(n_rows, -1).sum(axis=1), out=indptr[1:])
        return indptr, indices


#: the longest run of occupied rows a loaded hash table may have: a probe
#: walks at most this far (tables are at most half full; their runs are short)
MAX_PROBE_RUN = 4096


def check_table(table, what, max_value=None):
    """Raise ValueError unless ``table`` is a hash table the compiled probes
    can read safely and correctly: uint64 (size, 2) with size a power of two,
    an empty row, no run of occupied rows longer than :data:`MAX_PROBE_RUN`
    (so every probe ends soon), every key where a probe from its home row
    finds it, and values at most ``max_value``."""
    if not isinstance(table, np.ndarray) or table.dtype != np.uint64 or table.ndim != 2 \
            or table.shape[1] != 2:
        raise ValueError(f"{what}: a hash table is a uint64 array of shape (size, 2).")
    size = table.shape[0]
    if size < 16 or size & (size - 1):
        raise ValueError(f"{what}: {size} rows is not a power of two >= 16.")
    keys = table[:, 0]
    occupied = keys != 0
    empty = np.flatnonzero(~occupied)
    if empty.size == 0:
        raise ValueError(f"{what}: no empty row (a probe would never end).")
    if max_value is not None and (table[occupied, 1] > np.uint64(max_value)).any():
        raise ValueError(f"{what}: a value exceeds {max_value}.")
    # each occupied row's run starts after the last empty row before it (cyclically)
    idx = np.arange(size)
    last_empty = np.maximum.accumulate(np.where(occupied, -1, idx))
    last_empty = np.where(last_empty < 0, empty[-1] - size, last_empty)
    run_start = last_empty + 1                      # may be negative: wraps around
    if occupied.any() and (idx - run_start)[occupied].max() + 1 > MAX_PROBE_RUN:
        raise ValueError(f"{what}: a run of more than {MAX_PROBE_RUN} occupied rows.")
    with np.errstate(over="ignore"):
        home = (splitmix(keys) & np.uint64(size - 1)).astype(np.int64)
    # the probe from home walks forward to the row: the row must lie in home's run
    dist_home = (home - run_start) % size
    dist_row = (idx - run_start) % size
    if ((dist_home > dist_row) & occupied).any():
        raise ValueError(f"{what}: a key is where no probe finds it.")
