"""Compile (or load from Numba's cache) the kernels a typical session uses.

A container image or a cluster worker that runs this once, when it is built
or started, does not make the first user of a real fit wait for the
compiler: ``skcrf compile`` on the command line,
:func:`skcrf.dask.warm_up` on a cluster. The problems are tiny: what costs
time is the compilation, which depends on the argument types (dense or
sparse features, binary or real values, one or several threads, plain or
constrained fits), not on the size.
"""

import time
import warnings

import numpy as np

__all__ = ["compile_kernels"]


def compile_kernels(segmenter=True):
    """Run tiny fits and predictions through every common path.

    Parameters
    ----------
    segmenter : bool, default=True
        Also fit a tiny :class:`~skcrf.WordSegmenter` (the featurisation
        kernels of Chinese word segmentation).

    Returns
    -------
    seconds : float
        Wall time taken (compiling, or loading the compiled kernels).
    """
    from sklearn.exceptions import ConvergenceWarning

    from ._crf import LinearChainCRF
    from .feature_extraction import SequenceDictVectorizer

    with warnings.catch_warnings():
        # three iterations do not converge, and need not
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _run(LinearChainCRF, SequenceDictVectorizer, segmenter)


def _run(LinearChainCRF, SequenceDictVectorizer, segmenter):
    t = time.perf_counter()
    X = [np.eye(3), np.eye(3)[:2]]
    y = [["a", "b", "a"], ["b", "a"]]
    for n_jobs in (1, 2):
        crf = LinearChainCRF(max_iter=3, n_jobs=n_jobs).fit(X, y)
        crf.predict(X)
        crf.predict_marginals(X)
    # many labels: Viterbi's pruned kernels (skcrf._kernels.decode_pruned)
    many = [str(k) for k in range(32)]
    for n_jobs in (1, 2):     # a fit loads the threaded decoding driver too
        LinearChainCRF(max_iter=3, n_jobs=n_jobs).fit([np.eye(32)], [many]).predict(
            [np.eye(32), np.eye(32)[:5]])
    tokens = [[{"w": "a", "len": 1.5}, {"w": "b"}], [{"w": "b", "up": True}]]
    labels = [["B-X", "I-X"], ["O"]]
    S = SequenceDictVectorizer().fit_transform(tokens)
    for n_jobs in (1, 2):
        crf = LinearChainCRF(max_iter=3, n_jobs=n_jobs, constraints="BIO").fit(S, labels)
        crf.predict(S)
        crf.predict_marginals(S)
        crf.predict_topk(S, k=2)
    if segmenter:
        from .datasets import load_sample_cws
        from .segmentation import WordSegmenter

        sents = load_sample_cws()[:40]
        seg = WordSegmenter(max_iter=3).fit(["".join(s) for s in sents], sents)
        seg.predict(["".join(s) for s in sents[:2]])
    return time.perf_counter() - t
