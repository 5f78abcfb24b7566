import numpy as np
import pytest


def random_problem(rng, n_seq=4, max_len=4, n_labels=3, n_features=5, density=0.5,
                   float_values=True, scale=1.0, min_len=0):
    """Tiny random CRF problem: dense per-sequence features, labels, weights."""
    X = []
    y = []
    for _ in range(n_seq):
        T = int(rng.integers(min_len, max_len + 1))
        x = (rng.random((T, n_features)) < density).astype(float)
        if float_values:
            x *= rng.normal(size=(T, n_features))
        X.append(x)
        y.append(rng.integers(0, n_labels, size=T))
    W = rng.normal(scale=scale, size=(n_features, n_labels))
    A = rng.normal(scale=scale, size=(n_labels, n_labels))
    start = rng.normal(scale=scale, size=n_labels)
    end = rng.normal(scale=scale, size=n_labels)
    return X, y, W, A, start, end


@pytest.fixture
def rng():
    return np.random.default_rng(0)
