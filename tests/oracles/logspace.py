"""A NumPy log-space forward-backward: the slow reference for long sequences."""

import numpy as np


def log_forward_backward(E, A, start, end):
    """Node marginals (T, L) and log Z; every stored quantity is a log.

    Each step is a log-sum-exp over the previous log vector, with its maximum
    shifted out, so nothing can overflow or underflow whatever T is.
    """
    T, L = E.shape
    expA = np.exp(A - A.max())
    shift = A.max()
    la = np.empty((T, L))
    lb = np.empty((T, L))
    la[0] = start + E[0]
    for t in range(1, T):
        prev = la[t - 1]
        m = prev.max()
        la[t] = np.log(np.exp(prev - m) @ expA) + m + shift + E[t]
    lb[T - 1] = end
    for t in range(T - 2, -1, -1):
        nxt = E[t + 1] + lb[t + 1]
        m = nxt.max()
        lb[t] = np.log(expA @ np.exp(nxt - m)) + m + shift
    last = la[T - 1] + end
    m = last.max()
    logz = np.log(np.exp(last - m).sum()) + m
    return np.exp(la + lb - logz), logz
