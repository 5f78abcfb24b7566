"""Compile (or load from Numba's cache) the kernels a typical session uses.

A container image or a cluster worker that runs this once, when it is built
or started, does not make the first user of a real fit wait for the
compiler: ``skcrf compile`` on the command line,
:func:`skcrf.dask.warm_up` on a cluster. The problems are tiny: what costs
time is the compilation, which depends on the argument types (dense or
sparse features, binary or real values, one or several threads, plain or
constrained fits, the layout of the state weights), not on the size. The
layouts that only large models take are forced on tiny ones
(:func:`_forced_layout`).
"""

import os
import time
import warnings
from contextlib import contextmanager

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
    from ._kernels import compile_helper
    from .feature_extraction import SequenceDictVectorizer

    with warnings.catch_warnings():
        # three iterations do not converge, and need not
        warnings.simplefilter("ignore", ConvergenceWarning)
        # the underflow-safe paths, which these problems never need, compiled
        # beside the kernels of the common path (compile_helper.RARE_PATHS)
        compile_helper.RARE_PATHS = True
        try:
            return _run(LinearChainCRF, SequenceDictVectorizer, segmenter)
        finally:
            compile_helper.RARE_PATHS = False


def _run(LinearChainCRF, SequenceDictVectorizer, segmenter):
    t = time.perf_counter()
    X = [np.eye(3), np.eye(3)[:2]]
    y = [["a", "b", "a"], ["b", "a"]]
    # 2 labels, and 4: rows of 4-16 labels are quad rows, kernels of their
    # own (skcrf._kernels.emissions.quad_rows) in fit and predict
    X4, y4 = [np.eye(4), np.eye(4)[:2]], [["a", "b", "c", "d"], ["b", "a"]]
    for n_jobs in (1, 2):
        for Xs, ys in ((X, y), (X4, y4)):
            crf = LinearChainCRF(max_iter=3, n_jobs=n_jobs).fit(Xs, ys)
            crf.predict(Xs)
            crf.predict_marginals(Xs)
    # many labels: Viterbi's pruned kernels (skcrf._kernels.decode_pruned),
    # and rows too wide for quads in the objective (two sequences: two chunks
    # on two threads, the threaded driver)
    from ._kernels.decode_pruned import PRUNE_MIN_LABELS

    L = PRUNE_MIN_LABELS
    many = [str(k) for k in range(L)]
    Xm, ym = [np.eye(L), np.eye(L)[:5]], [many, many[:5]]
    for n_jobs in (1, 2):     # a fit loads the threaded decoding driver too
        LinearChainCRF(max_iter=3, n_jobs=n_jobs).fit(Xm, ym).predict(Xm)
    # and the full lanes for such rows: constraints that forbid a transition
    # out of every label (as BIOES does) leave the pruned step nothing to drop
    allowed = [(a, b) for a in many for b in many if a != b]
    LinearChainCRF(max_iter=3, constraints=allowed).fit(Xm, ym).predict(Xm)
    # a real model has thousands of parameters: on several threads, L-BFGS's
    # passes over them and the trial point run as several chunks, on the
    # threaded drivers, which a model of 18 parameters never reaches
    import scipy.sparse as sp

    from ._kernels.parallel import ELEMENT_BLOCK

    n = 3 * ELEMENT_BLOCK
    big = [sp.identity(n, format="csr")], [["a", "b"] * (n // 2)]
    LinearChainCRF(max_iter=3, n_jobs=2).fit(*big)
    # a CSR matrix with int64 indices (scikit-learn's DictVectorizer makes
    # them for large inputs), checked and converted by its own kernel
    from ._sequences import Sequences

    wide = sp.csr_matrix(np.eye(5))
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    S64 = Sequences(wide, [3, 2])
    LinearChainCRF(max_iter=3).fit(S64, y).predict(S64)
    # the layouts of large models, forced on tiny ones: compact state weights
    # (many features, few labels each) on one or two threads, one state
    # gradient shared by two threads; for real and for binary features
    S = SequenceDictVectorizer().fit_transform(
        [[{"w": "a"}, {"w": "b"}, {"w": "a"}], [{"w": "b"}, {"w": "c"}]])
    for layout, threads in (("compact", (1, 2)), ("shared", (2,))):
        with _forced_layout(layout):
            for n_jobs in threads:
                for Xs in (X, S):
                    LinearChainCRF(max_iter=3, n_jobs=n_jobs).fit(Xs, y).predict(Xs)
            if layout == "compact":      # its own L2 pass over many parameters
                LinearChainCRF(max_iter=3, n_jobs=2).fit(*big)
            else:                        # rows too wide for quads
                LinearChainCRF(max_iter=3, n_jobs=2).fit(Xm, ym)
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



@contextmanager
def _forced_layout(name):
    """Inside the block, a fit takes layout ``name`` of the state weights
    whatever the problem's size: ``"compact"`` (read in place from the
    parameter vector) or ``"shared"`` (several threads sharing one state
    gradient), which only large models take otherwise
    (skcrf._training.loss._use_compact, _OwnedRows). The thresholds are
    module constants of the loss: this must not run beside another fit in
    the process."""
    from ._training import loss

    names = ("_COMPACT_MIN_BYTES", "_COMPACT_MAX_FILL", "_PRIVATE_GRADIENT_BYTES")
    old = [getattr(loss, n) for n in names]
    if name == "compact":
        loss._COMPACT_MIN_BYTES, loss._COMPACT_MAX_FILL = -1, 2.0
    else:
        loss._PRIVATE_GRADIENT_BYTES = -1
    try:
        yield
    finally:
        for n, value in zip(names, old):
            setattr(loss, n, value)


def _segmenter_problem(n_jobs):
    """A default :class:`~skcrf.WordSegmenter`'s CRF (unfitted) and a
    synthetic problem of the argument types its featurisation gives (binary
    features, its tag set): enough sequences of mixed lengths for the real
    problem's paths (several chunks on several threads, SIMD lanes of similar
    lengths, single sequences)."""
    from ._sequences import Sequences
    from .segmentation import WordSegmenter
    from .segmentation._tags import words_to_tags

    seg = WordSegmenter(n_jobs=n_jobs)
    rng = np.random.default_rng(0)
    y = []
    for _ in range(400):
        words = ["x" * int(k) for k in rng.integers(1, 5, size=rng.integers(1, 12))]
        y.append(words_to_tags(words, seg.tags))
    lengths = np.array([len(t) for t in y])
    n_tokens, per_token, n_features = int(lengths.sum()), 8, 4000
    # distinct columns within a row: one from each of per_token disjoint ranges
    width = n_features // per_token
    indices = (rng.integers(0, width, size=(n_tokens, per_token))
               + width * np.arange(per_token)).astype(np.int32).ravel()
    indptr = np.arange(n_tokens + 1, dtype=np.int64) * per_token
    S = Sequences._from_binary_csr(indptr, indices, n_features, lengths)
    return seg._crf().set_params(max_iter=3, verbose=False), S, y


def segmenter_fit_kernels(n_jobs=None):
    """Compile the kernels of a default WordSegmenter's CRF fit that
    evaluate its objective (the input check, the pair counts, the data term
    and its gradient): not the optimiser's, which the process waiting for
    this helper compiles meanwhile (:func:`optimizer_kernels`), nor the
    featurisation's or the decoding's (:func:`segmenter_predict_kernels`).
    ``skcrf demo`` runs this and the decoding in helper processes while it
    featurises (see :mod:`skcrf._kernels.compile_helper`)."""
    crf, S, y = _segmenter_problem(n_jobs)

    def evaluate_once(terms, layout, *args, **kwargs):
        # the fit up to its objective: one evaluation, at zero, then stop
        terms[0](np.zeros(layout.n_params), crf.c2)

    crf._fit_terms = evaluate_once
    crf._fit(S, y)


def optimizer_kernels(n_jobs=None):
    """Compile the optimiser's kernels (L-BFGS's history passes, the line
    search's trial points) on a tiny quadratic, on ``n_jobs`` threads, as a
    fit would run them: what the process waiting for
    :func:`segmenter_fit_kernels` compiles meanwhile."""
    from ._kernels.parallel import ELEMENT_BLOCK, resolve_n_threads
    from ._training.optimize import minimize_lbfgs

    n_threads = resolve_n_threads(n_jobs)
    # one chunk (the serial kernels); on several threads also several (the
    # threaded drivers, which a real model's vector takes). Curvatures that
    # differ: the first step does not reach the minimum, the second uses the
    # stored pair (the direction's kernels)
    for n in (8, 2 * ELEMENT_BLOCK + 1) if n_threads > 1 else (8,):
        curvature = np.linspace(1.0, 4.0, n)

        def quadratic(x):
            r = x - 1.0
            return 0.5 * float(np.dot(curvature * r, r)), curvature * r

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")    # (three iterations need not converge)
            minimize_lbfgs(quadratic, np.zeros(n), max_iter=3, tol=0.0,
                           n_threads=n_threads)


def segmenter_predict_kernels(n_jobs=None):
    """Compile the decoding kernels a default WordSegmenter's ``predict`` uses
    (Viterbi and marginals), on a model made without fitting (fitting would
    compile the training kernels, the other helper's)."""
    crf, S, y = _segmenter_problem(n_jobs)
    classes = np.unique(np.concatenate([np.asarray(t) for t in y]))
    L, F = classes.size, S.n_features
    crf.classes_, crf.n_features_in_ = classes, F
    crf.coef_ = np.zeros((F, L)).T   # feature-major storage, as a fit leaves it
    crf.transition_coef_ = np.zeros((L, L))
    crf.start_coef_, crf.end_coef_ = np.zeros(L), np.zeros(L)
    crf._load_decoding_kernels()
    crf.predict(S)
    crf.predict_marginals(S[:50])


#: what ``python -m skcrf._warm_up <workload> [n_jobs] [--background]`` runs
#: (a helper), and what the process waiting for that helper compiles
#: meanwhile, itself (None: nothing)
WORKLOADS = {"segmenter-fit": (segmenter_fit_kernels, optimizer_kernels),
             "segmenter-predict": (segmenter_predict_kernels, None)}


def start_helper(workload, n_jobs=None, stage="fit", background=False):
    """Start a helper process compiling ``workload``'s kernels on a cold
    cache (:func:`skcrf._kernels.compile_helper.start`, given the workload's
    functions); returns whether one was started."""
    from ._kernels import compile_helper

    run, meanwhile = WORKLOADS[workload]
    return compile_helper.start(workload, n_jobs, stage=stage, background=background,
                                run=run, meanwhile=meanwhile)


def _main(argv):
    if "--background" in argv:
        argv = [a for a in argv if a != "--background"]
        if hasattr(os, "nice"):
            os.nice(10)   # only the cores the user's process leaves idle
    workload, *rest = argv
    n_jobs = None if not rest or rest[0] == "None" else int(rest[0])
    WORKLOADS[workload][0](n_jobs)


if __name__ == "__main__":
    import sys

    _main(sys.argv[1:])
