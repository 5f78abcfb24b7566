"""The one decoding path: Viterbi, marginals, exact k-best and path scores.

Every prediction in skcrf — :class:`~skcrf.LinearChainCRF`'s ``predict*``,
:class:`~skcrf.WordSegmenter`, model files (:mod:`skcrf.io`) and the command
line — goes through the pure functions of this module. Each takes the
sequences' :class:`~skcrf._arrays.KernelArrays`, the weights as a
:class:`~skcrf._arrays.Weights` and a thread count, and returns arrays; none
knows about estimators.

Two engines compute them (:data:`ENGINES`): ``"numba"``, the compiled
kernels (:mod:`skcrf._kernels.inference`), and ``"numpy"``
(:mod:`skcrf._numpy_inference`: Viterbi and marginals only, one thread, the
same label paths and scores), which lets the command line tag a few
sentences without paying Numba's start-up. This module imports NumPy only;
an engine is imported the first time it is used.

A sequence for which the weights allow no label path at all (only possible
with -inf transitions, i.e. constraints that no path of its length can
satisfy) makes every function raise a :class:`ValueError` naming it.
"""

import math
from importlib import import_module

import numpy as np

__all__ = ["ENGINES", "TOPK_MAX_BYTES", "viterbi", "marginals", "predict_indices",
           "path_scores", "topk", "topk_capacity", "topk_sequences"]

#: engine name -> module implementing ``viterbi`` / ``marginals`` (and, for
#: "numba", ``topk`` / ``path_scores``) with the signatures below
ENGINES = {"numba": "._kernels.inference", "numpy": "._numpy_inference"}

#: predict_topk refuses a k whose work arrays would exceed this many bytes
TOPK_MAX_BYTES = 2 ** 30


def _engine(name):
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {sorted(ENGINES)}, got {name!r}.")
    return import_module(ENGINES[name], __package__)


def viterbi(arrays, weights, n_threads=1, engine="numba"):
    """Most probable label path of every sequence.

    Returns
    -------
    labels : ndarray of int64, shape (n_tokens,)
        Label index of every token.
    scores : ndarray of shape (n_sequences,)
        Score of each best path (0 for an empty sequence).
    """
    return _engine(engine).viterbi(arrays, weights, n_threads)


def marginals(arrays, weights, n_threads=1, engine="numba"):
    """Node marginals and log partition function of every sequence.

    Returns
    -------
    P : ndarray of shape (n_tokens, n_labels)
        P(y_t = j | x); rows sum to 1.
    log_z : ndarray of shape (n_sequences,)
        log Z(x) (0 for an empty sequence).
    """
    return _engine(engine).marginals(arrays, weights, n_threads)


def viterbi_table(A):
    """The transitions prepared once for :func:`viterbi_sequence` (see
    ``_kernels.inference.viterbi_table``)."""
    return _engine("numba").viterbi_table(A)


def viterbi_sequence(arrays, weights, table, work=None):
    """Best path of one sequence with the compiled kernel called directly
    (see ``_kernels.inference.viterbi_sequence``): ``(labels, score, work)``.
    ``table``: :func:`viterbi_table` of the model's transitions."""
    return _engine("numba").viterbi_sequence(arrays, weights, table, work)


def load_kernels(weights, decoding="viterbi", n_threads=1):
    """Load (or compile) the compiled decoding kernels now rather than in the
    first prediction (see ``_kernels.inference.load_decoding``)."""
    _engine("numba").load_decoding(weights, decoding, n_threads)


def predict_indices(arrays, weights, decoding="viterbi", n_threads=1, engine="numba"):
    """Label index of every token: the Viterbi path (``decoding="viterbi"``)
    or each token's most probable label under the marginals
    (``"marginal"``, which maximises the expected number of correct tokens)."""
    if decoding == "marginal":
        P, _ = marginals(arrays, weights, n_threads, engine)
        return np.argmax(P, axis=1) if P.size else np.zeros(0, np.int64)
    if decoding != "viterbi":
        raise ValueError(f"decoding must be 'viterbi' or 'marginal', got {decoding!r}.")
    return viterbi(arrays, weights, n_threads, engine)[0]


def path_scores(arrays, weights, y, n_threads=1):
    """Score s(x, y) of the given label path of every sequence.

    ``y`` (int64, n_tokens) holds label indices. -inf for a path that uses a
    forbidden transition, 0 for an empty sequence.
    """
    return _engine("numba").path_scores(arrays, weights, y, n_threads)


def topk(arrays, weights, k, n_threads=1):
    """The k highest-scoring label paths of every sequence (exact k-best Viterbi).

    Returns
    -------
    paths : ndarray of int64, shape (n_tokens, k)
        ``paths[t, r]``: label of token t on the r-th best path of its sequence.
    scores : ndarray of shape (n_sequences, k)
        Path scores, best first (-inf beyond ``count``).
    count : ndarray of int64, shape (n_sequences,)
        How many paths each sequence has (at most k).

    Among equal scores, the path whose labels come first in label order,
    compared from the last token backwards, comes first.
    """
    return _engine("numba").topk(arrays, weights, k, n_threads)


def topk_capacity(arrays, n_labels, k):
    """``min(k, number of label paths of the longest sequence)``, and the bytes
    the k-best search needs for it."""
    lengths = np.diff(arrays.offsets)
    max_t = int(lengths.max()) if lengths.size else 0
    if n_labels > 1 and max_t * math.log(n_labels) < math.log(k):
        k = max(1, int(round(n_labels ** max_t)))
    elif n_labels <= 1:
        k = 1
    need = k * (arrays.n_tokens * 8 + arrays.n_sequences * 8 + max_t * n_labels * 16)
    return k, need


def topk_sequences(arrays, weights, k, n_threads=1, labels=None):
    """The k most probable label paths of every sequence with their log
    probabilities: for each sequence a list of up to k pairs
    ``(labels, log p(path | x))``, most probable first; ``labels`` maps label
    indices to the labels returned (default: the indices).

    Refuses (``ValueError``) a k whose work arrays would pass
    :data:`TOPK_MAX_BYTES`.
    """
    k_eff, need = topk_capacity(arrays, weights.n_labels, int(k))
    if need > TOPK_MAX_BYTES:
        raise ValueError(
            f"the {k} best paths would need about {need / 2**30:.1f} GiB of work "
            f"arrays for these {arrays.n_sequences} sequences; use a smaller k "
            "or fewer sequences per call."
        )
    paths, scores, count = topk(arrays, weights, k_eff, n_threads)
    _, log_z = marginals(arrays, weights, n_threads)
    if labels is not None:
        paths = np.asarray(labels, dtype=object)[paths]
    by_rank = paths.T.tolist() if paths.size else [[] for _ in range(k_eff)]
    off = arrays.offsets
    return [[(by_rank[q][off[s]:off[s + 1]], float(scores[s, q] - log_z[s]))
             for q in range(count[s])] for s in range(arrays.n_sequences)]
