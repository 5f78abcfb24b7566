"""Tiny CRF problems and models built from given weights, for the oracle tests."""

import numpy as np

from skcrf import LinearChainCRF
from skcrf._arrays import Weights
from skcrf._inference import marginals
from skcrf._validation import check_sequences


def model_from_weights(W, A, start, end, classes=None, **params):
    """A LinearChainCRF holding the given weights, as if fitted.

    ``W`` is (n_features, n_labels); -inf entries of ``A`` / ``start`` /
    ``end`` forbid those transitions.
    """
    crf = LinearChainCRF(**params)
    crf.classes_ = np.arange(W.shape[1]) if classes is None else np.asarray(classes)
    crf.coef_ = np.ascontiguousarray(W.T)
    crf.transition_coef_ = A
    crf.start_coef_ = start
    crf.end_coef_ = end
    crf.n_features_in_ = W.shape[0]
    return crf


def log_partition(crf, X):
    """log Z(x) of every sequence of X under a (fitted) model's weights."""
    W = np.ascontiguousarray(crf.coef_.T)
    weights = Weights.from_arrays(W, crf.transition_coef_, crf.start_coef_, crf.end_coef_)
    return marginals(check_sequences(X).kernel_arrays(), weights)[1]


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


def synthetic_ner(n_sent, seed):
    """Sentences from a small HMM over words with BIO-like labels."""
    rng = np.random.default_rng(seed)
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    L = len(labels)
    trans = rng.dirichlet(np.ones(L) * 0.5, size=L)
    trans[:, 0] += 1.5
    trans /= trans.sum(axis=1, keepdims=True)
    vocab = [f"w{k}" for k in range(150)]
    emit = rng.dirichlet(np.ones(len(vocab)) * 0.1, size=L)
    sents, tags = [], []
    for _ in range(n_sent):
        T = int(rng.integers(3, 18))
        s = [int(rng.integers(L))]
        for _ in range(T - 1):
            s.append(int(rng.choice(L, p=trans[s[-1]])))
        words = [vocab[rng.choice(len(vocab), p=emit[k])] for k in s]
        sents.append(words)
        tags.append([labels[k] for k in s])
    return sents, tags


def token_features(words, t):
    w = words[t]
    f = {"bias": 1.0, "w=" + w: 1.0, "suf=" + w[-1]: 1.0, "len": len(w) / 3.0}
    f["w-1=" + (words[t - 1] if t > 0 else "<s>")] = 1.0
    f["w+1=" + (words[t + 1] if t + 1 < len(words) else "</s>")] = 1.0
    return f
