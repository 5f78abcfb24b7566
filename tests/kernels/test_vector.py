"""The element-wise passes over the parameter vector, cut into thread chunks:
the same values as NumPy's, bit for bit, whatever the number of chunks."""

import numpy as np
import pytest

from skcrf._kernels import vector as K
from skcrf._kernels.parallel import element_bounds, run_chunks


@pytest.mark.parametrize("n", [0, 1, 2047, 2048, 2049, 10_000])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_element_bounds_cover_the_vector_on_block_edges(n, n_threads):
    b = element_bounds(n, n_threads)
    assert b[0] == 0 and b[-1] == n and b.size >= 2
    assert np.all(np.diff(b) > 0) or n == 0
    assert b.size - 1 <= max(1, n_threads)
    assert np.all(b[1:-1] % 2048 == 0)
    if n >= 2 * 2048 and n_threads > 1:
        assert b.size > 2          # really split


@pytest.mark.parametrize("n", [0, 5, 7000])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_passes_match_numpy_exactly(n, n_threads):
    rng = np.random.default_rng(n)
    bounds = element_bounds(n, n_threads)
    theta = rng.normal(size=n)
    # scatter into a larger flat buffer at distinct, shuffled positions
    positions = rng.permutation(2 * n + 3)[:n].astype(np.int64)
    flat = np.zeros(2 * n + 3)
    run_chunks(K._scatter_chunk, K._scatter_parallel, bounds, n_threads, theta, positions,
               flat)
    expected = np.zeros(2 * n + 3)
    expected[positions] = theta
    assert np.array_equal(flat, expected)

    # gradient: the buffers summed in order, minus the empirical counts, plus
    # the L2 term's 2 c2 theta (the bits of the separate passes it replaces)
    # (the cells read are cleared, the others left as they were)
    filled = rng.normal(size=(3, 2 * n + 3))
    empirical = rng.integers(0, 4, n).astype(float)
    for c2 in (0.0, 0.3):
        buffers = filled.copy()
        g = np.full(n, np.nan)
        partial = np.zeros((bounds.size - 1, 2))
        run_chunks(K._gradient_chunk, K._gradient_parallel, bounds, n_threads, buffers,
                   positions, empirical, theta, c2, g, partial)
        cleared = filled.copy()
        cleared[:, positions] = 0.0
        assert np.array_equal(buffers, cleared)
        buffers = filled
        ref = (buffers[0, positions] + buffers[1, positions]) + buffers[2, positions]
        ref -= empirical
        ref += 2.0 * c2 * theta
        assert np.array_equal(g, ref)
        te, tt = partial.sum(axis=0)
        assert te == pytest.approx(theta @ empirical, rel=1e-12, abs=1e-12)
        assert tt == pytest.approx(theta @ theta, rel=1e-12, abs=1e-12)

    # L2: g += 2 c2 theta, and theta . theta
    g2 = g.copy()
    partial = np.zeros(bounds.size - 1)
    run_chunks(K._l2_chunk, K._l2_parallel, bounds, n_threads, theta, 0.3, g2, partial)
    assert np.array_equal(g2, g + 2.0 * 0.3 * theta)
    assert partial.sum() == pytest.approx(theta @ theta, rel=1e-12, abs=1e-12)

    # a line search's trial point: the bits of NumPy's d * a + x
    d = rng.normal(size=n)
    out = np.empty(n)
    run_chunks(K._step_chunk, K._step_parallel, bounds, n_threads, theta, d, 0.7, out)
    assert np.array_equal(out, d * 0.7 + theta)
