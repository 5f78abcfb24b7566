"""The input check of the kernels' CSR rows, in one compiled pass.

Every public call validates its sequences before a kernel reads them (an
out-of-range column index would make the sparse passes read outside the
weights). Done with NumPy and SciPy (``indices.min()`` / ``max()``,
``check_format``, ``isfinite``, the all-ones test, the int32 copy of the
indices) that is six passes and their temporaries: on a test set of 50k
tokens at 9 labels about as long as a third of Viterbi itself. Here: one
loop over the rows, one over the non-zeros that also writes the int32
indices the kernels take, one over the values.
"""

import numpy as np
from numba import njit

from ._jit import _JIT

#: the codes :func:`check_csr` returns (the caller words the message)
OK, BAD_INDPTR, BAD_INDEX, NOT_FINITE = 0, 1, 2, 3


@njit(**_JIT)
def check_csr(indptr, indices, data, n_features, out):
    """Check CSR rows: ``indptr`` starts at 0, never decreases and ends at
    ``indices.size``; every column index is in ``[0, n_features)``; every value
    (``data`` of one per non-zero; a ``data`` of another size, the binary
    rows' single 1.0, is not read) is finite.

    Writes the indices to ``out`` (int32, same size) unless ``out`` is empty.

    Returns ``(code, where, ones)``: ``code`` is :data:`OK` or the first
    problem in the order above — :data:`BAD_INDEX` first (its position
    ``where`` in ``indices``), then :data:`BAD_INDPTR` (``where`` the row),
    then :data:`NOT_FINITE` (``where`` the non-zero) — and ``ones`` whether
    every value is 1.0 (binary features).
    """
    nnz = indices.size
    # branch-free reductions first (they vectorise); the position of a
    # problem is looked for only when there is one
    lo, hi = 0, n_features - 1
    if out.size == nnz:
        for p in range(nnz):
            f = indices[p]
            lo = min(lo, f)
            hi = max(hi, f)
            out[p] = f
    else:
        for p in range(nnz):
            f = indices[p]
            lo = min(lo, f)
            hi = max(hi, f)
    if lo < 0 or hi >= n_features:
        for p in range(nnz):
            if indices[p] < 0 or indices[p] >= n_features:
                return BAD_INDEX, p, False
    n_rows = indptr.size - 1
    if n_rows < 0 or indptr[0] != 0 or indptr[n_rows] != nnz:
        return BAD_INDPTR, 0, False
    drops = 0
    for r in range(n_rows):
        drops += indptr[r + 1] < indptr[r]
    if drops:
        for r in range(n_rows):
            if indptr[r + 1] < indptr[r]:
                return BAD_INDPTR, r, False
    if data.size != nnz:
        return OK, 0, False
    not_finite = not_one = 0
    for p in range(nnz):
        v = data[p]
        not_finite += not (abs(v) < np.inf)
        not_one += v != 1.0
    if not_finite:
        for p in range(nnz):
            if not np.isfinite(data[p]):
                return NOT_FINITE, p, False
    return OK, 0, not_one == 0
