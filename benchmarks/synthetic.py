"""Synthetic sequence-labelling corpora of any size, for the scaling benchmark.

``make_corpus(n_tokens, n_features, n_labels)`` draws

* sequence lengths around ``mean_length`` (1 + Poisson), cut to ``n_tokens``;
* labels from a random first-order Markov chain (each label has a few likely
  successors, like BIO tags), so transitions carry information;
* binary features: a bias feature, then ``nnz_per_token - 1`` draws from a
  Zipf law over the feature ids (repeats within a token are merged, so 20
  draws give about 16 distinct features) (a few very frequent
  features, a long tail of rare ones, as with words and character n-grams).
  Half of them are shifted by an offset that depends on the token's label,
  so the features predict the label and a CRF has something to learn.

Everything is vectorised over tokens (the Markov chain is a loop over
positions, vectorised over sequences), so 10^7 tokens take seconds.

    python benchmarks/synthetic.py --tokens 100000 --features 100000 --labels 10
"""

import argparse

import numpy as np
import scipy.sparse as sp


def _lengths(n_tokens, mean_length, rng):
    n_guess = int(n_tokens / mean_length * 1.2) + 10
    lengths = 1 + rng.poisson(mean_length - 1, size=n_guess)
    while lengths.sum() < n_tokens:
        lengths = np.concatenate([lengths, 1 + rng.poisson(mean_length - 1, size=n_guess)])
    cum = np.cumsum(lengths)
    n_seq = int(np.searchsorted(cum, n_tokens)) + 1
    lengths = lengths[:n_seq].copy()
    lengths[-1] -= int(cum[n_seq - 1] - n_tokens)
    return lengths[lengths > 0]


def _markov_labels(lengths, n_labels, rng):
    """One label per token, by a Markov chain run for all sequences at once."""
    # each label has 3 likely successors (itself included) and a little mass elsewhere
    P = np.full((n_labels, n_labels), 0.05 / n_labels)
    for i in range(n_labels):
        succ = rng.choice(n_labels, size=min(3, n_labels), replace=False)
        P[i, succ] += rng.dirichlet(np.ones(succ.size)) * 0.95
    P /= P.sum(axis=1, keepdims=True)
    cumP = np.cumsum(P, axis=1)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    y = np.empty(offsets[-1], dtype=np.int32)
    prev = rng.integers(0, n_labels, size=lengths.size)
    for t in range(int(lengths.max())):
        alive = np.flatnonzero(lengths > t)
        if t > 0:
            u = rng.random(alive.size)
            prev[alive] = np.minimum((cumP[prev[alive]] < u[:, None]).sum(axis=1),
                                     n_labels - 1)
        y[offsets[alive] + t] = prev[alive]
    return y, offsets


def make_corpus(n_tokens, n_features, n_labels, nnz_per_token=20, mean_length=25,
                zipf=1.3, seed=0):
    """A synthetic corpus.

    Returns
    -------
    X : skcrf.Sequences
        ``n_tokens`` rows, ``n_features`` columns, binary, about
        ``nnz_per_token`` non-zeros per row (duplicates drawn for a row are merged).
    y : list of ndarray of int32
        One label sequence per sequence, labels ``0 .. n_labels - 1``.
    """
    from skcrf import Sequences

    if nnz_per_token < 1 or n_features < nnz_per_token:
        raise ValueError("need 1 <= nnz_per_token <= n_features")
    rng = np.random.default_rng(seed)
    lengths = _lengths(n_tokens, mean_length, rng)
    y, offsets = _markov_labels(lengths, n_labels, rng)
    n = int(offsets[-1])
    k = nnz_per_token - 1
    # Zipf ranks over 1 .. n_features - 1 (0 is the bias), scattered by a permutation
    ranks = rng.zipf(zipf, size=(n, k)) - 1
    np.remainder(ranks, n_features - 1, out=ranks)
    # half of the draws depend on the label: shift by a label-specific offset
    informative = rng.random((n, k)) < 0.5
    shift = (y.astype(np.int64) * 7919 + 1)[:, None] * informative
    cols = (ranks + shift) % (n_features - 1)
    perm = rng.permutation(n_features - 1).astype(np.int64) + 1
    cols = perm[cols]
    del ranks, informative, shift
    cols = np.concatenate([np.zeros((n, 1), dtype=np.int64), cols], axis=1)
    cols.sort(axis=1)
    keep = np.ones(cols.shape, dtype=bool)
    keep[:, 1:] = cols[:, 1:] != cols[:, :-1]   # drop duplicates within a row
    counts = keep.sum(axis=1)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = cols[keep].astype(np.int32)
    del cols, keep
    X = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, n_features))
    X.has_sorted_indices = True
    return Sequences(X, lengths), np.split(y, offsets[1:-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=100_000)
    ap.add_argument("--labels", type=int, default=10)
    ap.add_argument("--nnz-per-token", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    X, y = make_corpus(args.tokens, args.features, args.labels, args.nnz_per_token,
                       seed=args.seed)
    print(f"{len(X)} sequences, {X.n_tokens} tokens, {X.n_features} features, "
          f"{X.X.nnz} non-zeros, {args.labels} labels "
          f"({np.bincount(np.concatenate(y), minlength=args.labels).min()} tokens of the rarest)")


if __name__ == "__main__":
    main()
