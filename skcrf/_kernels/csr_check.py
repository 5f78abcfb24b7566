"""The input check of the kernels' CSR rows, in one compiled pass.

Every public call validates its sequences before a kernel reads them: the
kernels do not check bounds, so an out-of-range column index would make the
sparse passes read outside the weights. With NumPy and SciPy the check is
several passes over the non-zeros, each with its temporaries (range, row
pointers, finiteness, the all-ones test, then the int32 copy of the indices
the kernels take); here it is one pass over the indices (which also writes
that copy), one over the row pointers and one over the values, and a second
look only where there is a problem to locate.
"""

import numpy as np
from numba import njit

from ._jit import _JIT

#: the codes :func:`check_csr` returns (the caller words the message)
OK, BAD_INDPTR, BAD_INDEX, NOT_FINITE = 0, 1, 2, 3


@njit(**_JIT)
def check_csr(indptr, indices, data, n_features, out):
    """Check CSR rows, in this order: every column index is in
    ``[0, n_features)``; ``indptr`` starts at 0, never decreases and ends at
    ``indices.size``; every value is finite (``data`` of one value per
    non-zero; a ``data`` of another size, the binary rows' single 1.0, is not
    read).

    Writes the indices to ``out`` (int32, same size) unless ``out`` is empty.

    Returns ``(code, where, ones)``: ``code`` is :data:`OK` or the first
    problem in that order — :data:`BAD_INDEX` (``where`` its position in
    ``indices``), :data:`BAD_INDPTR` (``where`` the row) or
    :data:`NOT_FINITE` (``where`` the non-zero) — and ``ones`` whether
    ``data`` holds one value per non-zero, every one 1.0 (binary features).
    """
    nnz = indices.size
    # branch-free reductions first (they vectorise); the position of a
    # problem is looked for only when there is one
    lo, hi = 0, n_features - 1
    if out.size == nnz:
        # the copy in the same loop: a pass of its own reads the indices again
        for p in range(nnz):
            f = indices[p]
            lo = min(lo, f)
            hi = max(hi, f)
            out[p] = f
    else:
        for p in range(nnz):
            lo = min(lo, indices[p])
            hi = max(hi, indices[p])
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
