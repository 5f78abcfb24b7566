"""Slow, obviously correct references: enumerate every label sequence.

Only for tiny problems (n_labels ** length sequences). Inputs are dense:
``X`` (T, n_features), ``W`` (n_features, n_labels), ``A`` (from, to),
``start`` and ``end`` (n_labels,). ``allowed`` is an optional boolean
(n_labels, n_labels) mask of allowed transitions.
"""

import itertools

import numpy as np
from scipy.special import logsumexp


def all_paths(T, L):
    return [np.array(p, dtype=int) for p in itertools.product(range(L), repeat=T)]


def path_score(X, W, A, start, end, path):
    E = X @ W
    s = E[np.arange(len(path)), path].sum()
    s += A[path[:-1], path[1:]].sum()
    if len(path):
        s += start[path[0]] + end[path[-1]]
    return s


def scores(X, W, A, start, end):
    T, L = X.shape[0], W.shape[1]
    paths = all_paths(T, L)
    return paths, np.array([path_score(X, W, A, start, end, p) for p in paths])


def log_z(X, W, A, start, end):
    _, s = scores(X, W, A, start, end)
    return logsumexp(s)


def log_prob(X, W, A, start, end, path):
    return path_score(X, W, A, start, end, np.asarray(path)) - log_z(X, W, A, start, end)


def marginals(X, W, A, start, end):
    """Node marginals (T, L) and summed pair marginals (L, L)."""
    T, L = X.shape[0], W.shape[1]
    paths, s = scores(X, W, A, start, end)
    p = np.exp(s - logsumexp(s))
    node = np.zeros((T, L))
    pair = np.zeros((L, L))
    for path, pr in zip(paths, p):
        node[np.arange(T), path] += pr
        np.add.at(pair, (path[:-1], path[1:]), pr)
    return node, pair


def viterbi(X, W, A, start, end):
    paths, s = scores(X, W, A, start, end)
    return paths[int(np.argmax(s))]  # first maximum: lexicographically smallest


def objective(seq_list, y_list, W, A, start, end, c2, theta_sq, weights=None):
    """-sum_i w_i log p(y_i | x_i) + c2 * theta_sq."""
    weights = np.ones(len(seq_list)) if weights is None else weights
    nll = 0.0
    for w, X, y in zip(weights, seq_list, y_list):
        if X.shape[0]:
            nll -= w * log_prob(X, W, A, start, end, y)
    return nll + c2 * theta_sq
