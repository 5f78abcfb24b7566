"""Viterbi with sequences side by side in SIMD lanes (``_lane_viterbi``)
against the same sequences run one at a time (bit for bit) and against
enumeration of every label path; the pruned step of many labels
(``_pruned_step``) against enumeration and the lanes."""

import numpy as np
import pytest

from skcrf import Sequences
from skcrf import _inference as inference
from skcrf._arrays import Weights
from skcrf._kernels.decode import _VITERBI_LANE_MAX_T
from skcrf._kernels.decode_pruned import (
    ALONE_ABOVE,
    ALONE_MIN_LABELS,
    LANES_ABOVE,
    PRUNE_MIN_LABELS,
    SEQUENCE_PRUNE_MIN_LABELS,
)
from skcrf._kernels.inference import _decodes_pruned
from tests.oracles import naive


def _problem(rng, L, lengths, n_features=6, integer=False, constrained=False):
    X = [(rng.random((T, n_features)) < 0.5) *
         (rng.integers(-2, 3, size=(T, n_features)) if integer
          else rng.normal(size=(T, n_features))) for T in lengths]
    draw = (lambda *s: rng.integers(-2, 3, size=s).astype(float)) if integer else \
        (lambda *s: rng.normal(size=s))
    W, A, start, end = draw(n_features, L), draw(L, L), draw(L), draw(L)
    if constrained:
        A[rng.random((L, L)) < 0.4] = -np.inf
        A[0, 0] = start[0] = end[0] = 0.0            # the path 0, 0, ... stays allowed
        start[1:][rng.random(L - 1) < 0.3] = -np.inf
    return X, Weights.from_arrays(W, A, start, end)


def _spy(monkeypatch, name, sizes=False):
    """Record the sequences each call of the one-at-a-time kernel ``name``
    of skcrf._kernels.inference is given (their number with ``sizes``)."""
    from skcrf._kernels import inference as kernels

    calls = []
    real = getattr(kernels, name)

    def spy(seqs, *args):
        calls.append(seqs.size if sizes else list(seqs))
        return real(seqs, *args)

    monkeypatch.setattr(kernels, name, spy)
    return calls


def _alone(X, weights):
    """Labels and scores of each sequence run by itself, by the one-sequence
    kernel (``viterbi_sequence`` calls it directly: the batch driver runs
    even one sequence in lanes, beside copies of it)."""
    labels, scores = [], []
    table = inference.viterbi_table(weights.A)
    for x in X:
        arrays = Sequences.from_list([x]).kernel_arrays()
        try:
            lab, sc, _ = inference.viterbi_sequence(arrays, weights, table)
        except ValueError:      # no allowed path: the batch driver says so too
            lab, sc = np.zeros(len(x), dtype=np.int64), np.array([-np.inf])
        labels.append(lab)
        scores.append(sc[0])
    return np.concatenate(labels), np.array(scores)


def _check_against_enumeration(X, arrays, weights, labels, scores):
    """Each decoded path scores the maximum over every label path, and its
    reported score is that path's score (0 for an empty sequence)."""
    W, A, start, end = weights
    for s, x in enumerate(X):
        if not len(x):
            assert scores[s] == 0.0
            continue
        path = labels[arrays.offsets[s]:arrays.offsets[s + 1]]
        _, all_scores = naive.scores(x, W, A, start, end)
        got = naive.path_score(x, W, A, start, end, path)
        np.testing.assert_allclose(got, all_scores.max(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(scores[s], got, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("L", [1, 2, 3, 4])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_lanes_match_one_at_a_time_and_enumeration(seed, L, n_threads):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 7, size=45)             # empty ones among them
    # integer weights make ties: the first maximum must win in both paths
    X, weights = _problem(rng, L, lengths, integer=seed % 2 == 0,
                          constrained=seed % 4 >= 2 and L > 1)
    arrays = Sequences.from_list(X).kernel_arrays()
    labels, scores = inference.viterbi(arrays, weights, n_threads)
    want_labels, want_scores = _alone(X, weights)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(scores, want_scores)   # the same bits
    _check_against_enumeration(X, arrays, weights, labels, scores)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("L", [5, 6, 7, 10, 12, 15])
def test_lanes_match_one_at_a_time_and_enumeration_at_more_labels(seed, L):
    # as above beyond 4 labels (the lanes' step takes labels in blocks of 4,
    # then one by one: 10 = 4 + 4 + 1 + 1, 12 = 4 + 4 + 4, 15 = 4 + 4 + 4 + 3):
    # ties (integer weights) and -inf transitions and starts, the same bits
    # as one sequence at a time and the best path of enumeration
    rng = np.random.default_rng(100 * L + seed)
    lengths = rng.integers(0, 5, size=40)
    X, weights = _problem(rng, L, lengths, integer=seed % 2 == 0, constrained=seed >= 2)
    arrays = Sequences.from_list(X).kernel_arrays()
    labels, scores = inference.viterbi(arrays, weights)
    want_labels, want_scores = _alone(X, weights)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(scores, want_scores)
    _check_against_enumeration(X, arrays, weights, labels, scores)


@pytest.mark.parametrize("L", [5, 9, 17])
def test_lanes_match_one_at_a_time_with_long_and_many_labels(L):
    # batches of similar lengths, ragged ones, one sequence too long for the
    # lanes (it runs alone, its batch-mates too), many labels
    rng = np.random.default_rng(L)
    lengths = np.concatenate([rng.integers(1, 60, size=50), [_VITERBI_LANE_MAX_T + 3],
                              rng.integers(0, 4, size=20)])
    X, weights = _problem(rng, L, lengths, n_features=30)
    arrays = Sequences.from_list(X).kernel_arrays()
    labels, scores = inference.viterbi(arrays, weights)
    want_labels, want_scores = _alone(X, weights)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(scores, want_scores)


@pytest.mark.parametrize("seed", range(8))
def test_pruned_step_matches_enumeration(seed):
    # from PRUNE_MIN_LABELS labels on, the lanes take the pruned step
    # (_lane_kept); ties (integer weights) and -inf transitions and starts
    L = PRUNE_MIN_LABELS + 1
    rng = np.random.default_rng(seed)
    # (one sequence of three steps: L^3 paths to enumerate)
    lengths = np.concatenate([rng.integers(0, 3, size=9), [3]])
    X, weights = _problem(rng, L, lengths, integer=seed % 2 == 0, constrained=seed >= 4)
    if seed in (4, 5):
        # one label whose transitions are all allowed gives the bound its
        # floor; with none (seeds 6, 7) the full lanes decode
        W, A, start, end = weights
        A[3] = np.where(np.isfinite(A[3]), A[3], 0.0)
        weights = Weights.from_arrays(W, A, start, end)
    assert _decodes_pruned(weights) == (seed < 6)
    arrays = Sequences.from_list(X).kernel_arrays()
    labels, scores = inference.viterbi(arrays, weights)
    _check_against_enumeration(X, arrays, weights, labels, scores)
    np.testing.assert_array_equal(inference.viterbi(arrays, weights, engine="numpy")[1], scores)


@pytest.mark.parametrize("seed", range(6))
def test_one_sequence_pruned_step_matches_enumeration_and_numpy(seed):
    # a sequence alone (viterbi_sequence) from SEQUENCE_PRUNE_MIN_LABELS labels
    # on takes _pruned_step: two-token sequences against enumeration (L^2
    # paths), longer ones against the NumPy engine's full steps; ties and
    # -inf transitions and starts
    L = SEQUENCE_PRUNE_MIN_LABELS + 1
    rng = np.random.default_rng(seed)
    lengths = np.concatenate([[2, 2, 1], rng.integers(3, 30, size=6)])
    X, weights = _problem(rng, L, lengths, integer=seed % 2 == 0, constrained=seed >= 3)
    arrays = Sequences.from_list(X).kernel_arrays()
    labels, scores = _alone(X, weights)
    _check_against_enumeration(X[:3], arrays, weights, labels, scores[:3])
    want_labels, want_scores = inference.viterbi(arrays, weights, engine="numpy")
    np.testing.assert_array_equal(scores, want_scores)
    np.testing.assert_array_equal(labels, want_labels)


def _kept_fractions(X, weights, arrays):
    """Shares of the previous labels the pruned steps keep on X, recomputed
    in NumPy from the bound of ``_lane_kept`` / ``_pruned_step``: summed
    over the steps of the lane batches the kernel makes (a label counts
    when some lane of the batch keeps it), and over one sequence at a time."""
    from skcrf._kernels.parallel import chunk_bounds, order_by_length

    W, A, start, end = weights
    L = A.shape[0]
    rowmax, rowmin = A.max(axis=1), A.min(axis=1)
    scores = []
    for x in X:        # Viterbi's forward scores of each sequence
        E = x @ W
        S = np.empty_like(E)
        if len(x):
            S[0] = E[0] + start
        for t in range(1, len(x)):
            S[t] = (S[t - 1][:, None] + A).max(axis=0) + E[t]
        scores.append(S)
    keeps = [S[:-1] + rowmax >= (S[:-1] + rowmin).max(axis=1, keepdims=True) for S in scores]
    alone = sum(k.sum() for k in keeps) / (L * sum(len(k) for k in keeps))
    bounds = chunk_bounds(arrays.offsets, arrays.indptr, L, 1)
    order = [s for s in order_by_length(arrays.offsets, bounds) if len(X[s])]
    kept = steps = 0
    for i in range(0, len(order), 8):
        batch = [keeps[s] for s in order[i:i + 8]]
        for t in range(max(len(k) for k in batch)):
            kept += np.logical_or.reduce([k[t] for k in batch if t < len(k)]).sum()
            steps += 1
    return kept / (L * steps), alone


@pytest.mark.parametrize("L", [PRUNE_MIN_LABELS, PRUNE_MIN_LABELS + 6, ALONE_MIN_LABELS])
@pytest.mark.parametrize("scale", [30.0, 1.0, 0.3])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_pruned_lanes_and_one_at_a_time_agree_bit_for_bit(L, scale, n_threads):
    # the same labels and bits as the full step, one sequence at a time, in
    # every regime of the pruned chunk. From
    # ALONE_MIN_LABELS on: strong emissions, the lanes between them keep few
    # labels (pruned lanes throughout); weaker ones, the lanes keep most, each
    # sequence few (one at a time after the first steps); weak ones, each
    # sequence keeps many too (back in lanes)
    rng = np.random.default_rng(7)
    lengths = np.concatenate([rng.integers(1, 40, size=150), [0, 0]])
    X, weights = _problem(rng, L, lengths, n_features=30)
    W, A, start, end = weights
    weights = Weights.from_arrays(W * scale, A, start, end)
    arrays = Sequences.from_list(X).kernel_arrays()
    if L >= ALONE_MIN_LABELS:     # (the regime each scale reaches: every switch taken)
        lanes, alone = _kept_fractions(X, weights, arrays)
        if scale == 30.0:
            assert lanes < 1 / ALONE_ABOVE
        elif scale == 1.0:
            assert lanes > 1 / ALONE_ABOVE and alone < 1 / LANES_ABOVE
        else:
            assert lanes > 1 / ALONE_ABOVE and alone > 1 / LANES_ABOVE
    labels, scores = inference.viterbi(arrays, weights, n_threads)
    want_labels, want_scores = _alone(X, weights)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(scores, want_scores)
    np.testing.assert_array_equal(inference.viterbi(arrays, weights, engine="numpy")[1], scores)


def test_single_sequence_viterbi_refuses_a_table_of_another_shape():
    # the compiled kernel reads rows L and L + 1 of the table unchecked: a
    # plain A.T (the argument of before) must be refused, not read past its end
    rng = np.random.default_rng(0)
    X, weights = _problem(rng, PRUNE_MIN_LABELS + 1, [3])
    arrays = Sequences.from_list(X).kernel_arrays()
    with pytest.raises(ValueError, match="viterbi_table"):
        inference.viterbi_sequence(arrays, weights, np.ascontiguousarray(weights.A.T))
    labels, _, _ = inference.viterbi_sequence(arrays, weights, inference.viterbi_table(weights.A))
    np.testing.assert_array_equal(labels, inference.viterbi(arrays, weights)[0])


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("L", [3, 4])     # a matrix, and quad rows
def test_marginals_that_underflow_take_the_log_space_path(n_threads, L):
    """The scaled recursion underflows on one sequence of twenty (label 2
    falls e^-800 below label 0, then wins: test_objective's partial
    underflow): _marginals_chunk leaves its lane batch (log Z NaN),
    _marginals_listed gets it right, one at a time (the others of the batch
    by the scaled recursion, it by the log-space one)."""
    W = np.zeros((3, L))
    W[:, :3] = [[800.0, 0.0, 0.0], [0.0, 0.0, 600.0], [0.0, 0.0, 600.0]]
    allowed = np.ones((L, L), dtype=bool)
    allowed[2, :] = allowed[:, 2] = False
    allowed[2, 2] = True                  # label 2 only follows and precedes itself
    A = np.where(allowed, 0.0, -np.inf)
    start, end = np.zeros(L), np.zeros(L)
    rng = np.random.default_rng(L)
    X = [0.3 * rng.random((int(T), 3)) for T in rng.integers(1, 6, size=20)]
    X[7] = np.eye(3)
    arrays = Sequences.from_list(X).kernel_arrays()
    P, log_z = inference.marginals(arrays, Weights.from_arrays(W, A, start, end),
                                   n_threads=n_threads)
    for s, x in enumerate(X):
        node, _ = naive.marginals(x, W, A, start, end)
        assert log_z[s] == pytest.approx(naive.log_z(x, W, A, start, end), rel=1e-12)
        rows = slice(arrays.offsets[s], arrays.offsets[s + 1])
        np.testing.assert_allclose(P[rows], node, rtol=1e-9, atol=1e-12)
    assert log_z[7] == pytest.approx(1200.0, rel=1e-12)


@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 17])
def test_padded_lane_batches_decode_only_their_sequences(n, monkeypatch):
    # n sequences: full batches and one padded with copies of its last
    # sequence; the copies write nothing (same labels and scores as alone),
    # and no sequence is left to the one-at-a-time kernel
    calls = _spy(monkeypatch, "_viterbi_listed", sizes=True)
    rng = np.random.default_rng(n)
    X, weights = _problem(rng, 5, rng.integers(1, 30, size=n))
    labels, scores = inference.viterbi(Sequences.from_list(X).kernel_arrays(), weights)
    want_labels, want_scores = _alone(X, weights)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(scores, want_scores)
    assert calls == []


def test_only_sequences_too_long_for_the_lanes_run_alone(monkeypatch):
    calls = _spy(monkeypatch, "_viterbi_listed")
    rng = np.random.default_rng(1)
    lengths = [5, _VITERBI_LANE_MAX_T + 1, 0, 7, _VITERBI_LANE_MAX_T + 9, 3]
    X, weights = _problem(rng, 4, lengths)
    labels, scores = inference.viterbi(Sequences.from_list(X).kernel_arrays(), weights)
    assert calls == [[1, 4]]
    want_labels, want_scores = _alone(X, weights)
    np.testing.assert_array_equal(labels, want_labels)
    np.testing.assert_array_equal(scores, want_scores)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("L", [2, 4, 6, 17])
def test_marginals_in_lanes_match_enumeration(n_threads, L, monkeypatch):
    # ragged lengths, empty sequences, padded last batches, a constrained
    # model: every sequence in lanes, none left to _marginals_listed
    calls = _spy(monkeypatch, "_marginals_listed", sizes=True)
    rng = np.random.default_rng(L)
    lengths = np.concatenate([rng.integers(1, 5, size=21), [0, 0, 1]])
    X, weights = _problem(rng, L, lengths, n_features=5, constrained=True)
    arrays = Sequences.from_list(X).kernel_arrays()
    P, log_z = inference.marginals(arrays, weights, n_threads=n_threads)
    assert calls == []
    W, A, start, end = weights
    for s, x in enumerate(X):
        rows = slice(arrays.offsets[s], arrays.offsets[s + 1])
        if len(x) == 0:
            assert log_z[s] == 0.0 and P[rows].shape == (0, L)
            continue
        node, _ = naive.marginals(x, W, A, start, end)
        assert log_z[s] == pytest.approx(naive.log_z(x, W, A, start, end), rel=1e-12)
        np.testing.assert_allclose(P[rows], node, rtol=1e-9, atol=1e-12)


def test_marginals_of_sequences_too_long_for_the_lanes_run_alone(monkeypatch):
    calls = _spy(monkeypatch, "_marginals_listed")
    rng = np.random.default_rng(3)
    lengths = [4, _VITERBI_LANE_MAX_T + 2, 3, 0, 5]
    X, weights = _problem(rng, 3, lengths)
    arrays = Sequences.from_list(X).kernel_arrays()
    P, log_z = inference.marginals(arrays, weights)
    assert calls == [[1]]
    W, A, start, end = weights
    for s in (0, 2, 4):
        rows = slice(arrays.offsets[s], arrays.offsets[s + 1])
        node, _ = naive.marginals(X[s], W, A, start, end)
        np.testing.assert_allclose(P[rows], node, rtol=1e-9, atol=1e-12)
    # the long one: the forward-backward of the oracles in log space
    from tests.oracles import logspace

    node, logz = logspace.log_forward_backward(X[1] @ W, A, start, end)
    rows = slice(arrays.offsets[1], arrays.offsets[2])
    np.testing.assert_allclose(P[rows], node, rtol=1e-7, atol=1e-10)
    assert log_z[1] == pytest.approx(logz, rel=1e-10)
