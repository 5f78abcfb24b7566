"""The parameter layout: counts per shard add up to the counts of the whole data."""

import numpy as np
import pytest
import scipy.sparse as sp

from skcrf import Sequences
from skcrf._training.layout import build_layout, count_pairs


def _data(rng, n_seq=30, F=12, L=70):
    X = [sp.random(int(rng.integers(0, 7)), F, density=0.3, format="csr",
                   random_state=rng) for _ in range(n_seq)]
    seqs = Sequences.from_list(X, n_features=F)
    y = rng.integers(0, L, size=seqs.n_tokens).astype(np.int32)
    w = rng.choice([0.0, 0.5, 2.0], size=n_seq)
    return seqs, y, w


def _reference(seqs, y, w, L):
    """Dense counts by plain loops."""
    F = seqs.n_features
    counts, seen = np.zeros((F, L)), np.zeros((F, L), bool)
    trans, tseen = np.zeros((L, L)), np.zeros((L, L), bool)
    start, end = np.zeros(L), np.zeros(L)
    for s in range(len(seqs)):
        a, b = seqs.offsets[s], seqs.offsets[s + 1]
        for t in range(a, b):
            row = seqs.X[t]
            for f, v in zip(row.indices, row.data):
                counts[f, y[t]] += w[s] * v
                seen[f, y[t]] |= w[s] > 0
            if t > a:
                trans[y[t - 1], y[t]] += w[s]
                tseen[y[t - 1], y[t]] |= w[s] > 0
        if b > a:
            start[y[a]] += w[s]
            end[y[b - 1]] += w[s]
    return counts, seen, trans, tseen, start, end


@pytest.mark.parametrize("L", [3, 70])   # one and two 64-bit words per feature
def test_counts_match_loops_and_shards_add_up(L):
    rng = np.random.default_rng(L)
    seqs, y, w = _data(rng, L=L)
    counts, seen, trans, tseen, start, end = _reference(seqs, y, w, L)
    c = count_pairs(seqs.kernel_arrays(), y, w, L, seqs.n_features)
    np.testing.assert_array_equal(c.state_keys, np.flatnonzero(seen.reshape(-1)))
    np.testing.assert_allclose(c.state_counts, counts.reshape(-1)[c.state_keys])
    np.testing.assert_allclose(c.trans_counts, trans)
    np.testing.assert_array_equal(c.trans_seen, tseen)
    np.testing.assert_allclose(c.start_counts, start)
    np.testing.assert_allclose(c.end_counts, end)
    # three shards, counted apart and summed
    cut = [0, 9, 20, len(seqs)]
    parts = []
    for a, b in zip(cut[:-1], cut[1:]):
        sh = seqs[a:b]
        parts.append(count_pairs(sh.kernel_arrays(), y[seqs.offsets[a]:seqs.offsets[b]],
                                 w[a:b], L, seqs.n_features))
    total = parts[0] + parts[1] + parts[2]
    np.testing.assert_array_equal(total.state_keys, c.state_keys)
    np.testing.assert_allclose(total.state_counts, c.state_counts)
    np.testing.assert_allclose(total.trans_counts, c.trans_counts)
    np.testing.assert_array_equal(total.trans_seen, c.trans_seen)
    # the layout of the summed counts is the layout of the whole data, and the
    # empirical counts of the shards add up to the whole data's
    full = build_layout(c, all_possible_transitions=False)
    summed = build_layout(total, all_possible_transitions=False)
    np.testing.assert_array_equal(full.state_pos, summed.state_pos)
    np.testing.assert_array_equal(full.trans_pos, summed.trans_pos)
    np.testing.assert_allclose(sum(full.empirical(p) for p in parts), full.empirical(c))
    dense = build_layout(c, all_possible_states=True)
    W, A, S, E = dense.unpack(dense.empirical(c))
    np.testing.assert_allclose(W, counts)
    np.testing.assert_allclose(A, trans)
