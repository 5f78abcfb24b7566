"""Training where the data lives: a pipeline fitted on a Dask cluster.

Needs the ``dask`` extra (``pip install "skcrf[dask]"``: ``dask[distributed]``).

:func:`fit_pipeline` fits a ``SequenceFeaturizer`` (or ``SequenceDictVectorizer``)
+ ``LinearChainCRF`` pipeline on a ``dask.bag.Bag`` of ``(sequence, labels)``
pairs, each partition staying on the worker that holds it:

1. every partition checks its records as a local fit checks its input
   (errors name the record's index in the bag) and fits the vocabulary of
   its text (a :class:`~skcrf.feature_extraction.FittedVocabulary`, or
   feature-dict counts); these are merged in a tree reduction on the
   cluster (:meth:`FittedVocabulary.merge`: the same vocabulary step as a
   local fit): the vocabulary; the labels give the classes;
2. every partition featurises its sequences with that vocabulary and counts
   its (feature, label) pairs; the pair counts are summed the same way: the
   parameter layout, built on the driver;
3. every partition keeps a :class:`skcrf._training.loss.CRFLoss` of its data;
   per evaluation of the objective only the weights go out (scattered once
   to every worker) and each partition's ``(loss, gradient)`` comes back,
   summed in a tree reduction; the penalty is added once on the driver,
   where the optimiser runs (skcrf's L-BFGS, or OWL-QN with ``c1``).

The result is the ordinary fitted ``Pipeline`` (no Dask needed to predict or
pickle it), with the same features, the same parameter layout and the same
optimum as a local fit on the same data. A worker lost mid-fit is replaced
by Dask, which recomputes its partitions from their source; the fit then
goes on to the same optimum. If that is impossible the fit stops with the
error, and the pipeline is left as it was.

:func:`predict_bag` labels a bag of sequences with a fitted pipeline,
partition by partition. :func:`warm_up` loads (or compiles) the kernels on
every worker before the first real task.
"""

import re

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from ._constraints import constraint_masks
from ._crf import LinearChainCRF
from ._training.layout import count_pairs
from ._training.loss import CRFLoss
from ._validation import check_labels
from .feature_extraction._dict_vectorizer import (
    SequenceDictVectorizer,
    count_items,
    merge_item_counts,
)
from .feature_extraction._featurizer import SequenceFeaturizer
from .feature_extraction._units import read_units
from .feature_extraction._vocabulary import FittedVocabulary

__all__ = ["fit_pipeline", "predict_bag", "warm_up"]


def _client(client):
    if client is not None:
        return client
    try:
        from distributed import get_client
    except ImportError as exc:   # pragma: no cover - the dask extra is missing
        raise ImportError("skcrf.dask needs dask[distributed]: pip install "
                          "'skcrf[dask]'") from exc
    try:
        return get_client()
    except ValueError:
        raise ValueError("fit_pipeline needs a dask.distributed Client: start one "
                         "(Client(), or Client(LocalCluster(...))) or pass client=.") from None


def _tree(client, futures, combine):
    """Combine futures pairwise on the cluster until one is left."""
    futures = list(futures)
    while len(futures) > 1:
        nxt = [client.submit(combine, a, b, pure=False)
               for a, b in zip(futures[::2], futures[1::2])]
        if len(futures) % 2:
            nxt.append(futures[-1])
        futures = nxt
    return futures[0]


# ------------------------------------------------------------ featurizer side
def _records(part, start):
    """A partition's records as ``(X, y)``, each checked as a local fit checks
    its input; errors name the record's index in the whole bag (the
    partition's records start at ``start``)."""
    part = list(part)
    for i, rec in enumerate(part):
        if not isinstance(rec, (tuple, list)) or len(rec) != 2:
            raise ValueError(f"record {start + i} of the bag is {type(rec).__name__} "
                             f"{_short(rec)}; each record must be a (sequence, labels) pair.")
    X = [x for x, _ in part]
    y = [lab for _, lab in part]
    return X, y


def _short(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _in_bag(exc, start):
    """``exc`` with the sequence indices of its message (``X[i]``, ``y[i]``)
    made indices in the whole bag."""
    if start:
        msg = re.sub(r"\b([Xy])\[(\d+)\]",
                     lambda m: f"{m.group(1)}[{int(m.group(2)) + start}]", str(exc))
        exc = type(exc)(msg)
    return exc


def _partition_stats(featurizer, part, start):
    """Validate a partition; its vocabulary (or feature-dict counts), labels
    and sizes."""
    X, y = _records(part, start)
    try:
        if isinstance(featurizer, SequenceDictVectorizer):
            keys, counts = count_items(X)
            stats = {"kind": "dict", "keys": keys, "counts": counts}
            lengths = [len(x) for x in X]
        else:
            units = read_units(X)
            vocab, _, _ = FittedVocabulary.fit(featurizer._make_templates(units), units)
            stats = {"kind": "templates", "vocabulary": vocab, "n_tokens": units.n_tokens}
            lengths = units.lengths
        flat = check_labels(y, np.asarray(lengths, dtype=np.int64))
        kind = "str" if flat.dtype.kind == "U" else "int"
        labels = np.unique(flat)
    except (TypeError, ValueError) as exc:
        raise _in_bag(exc, start) from None
    stats.update(labels=labels, label_kind=kind if flat.size else None,
                 n_sequences=len(X), start=start)
    return stats


def _shift(vocab, n_tokens):
    return vocab.shifted(n_tokens)


def _merge(a, b):
    return a.merge(b)


def _partition_features(fitted, part):
    """A partition's Sequences in the fitted vocabulary, and its labels."""
    X, y = _records(part, 0)
    return fitted.transform(X), y


# ------------------------------------------------------------------ CRF side
def _partition_counts(features, classes, sample_weight=None):
    seqs, y = features
    flat = np.concatenate([np.asarray(s, dtype=object) for s in y]) if y else np.zeros(0)
    idx = np.searchsorted(classes, flat.astype(classes.dtype)).astype(np.int32)
    w = np.ones(len(seqs))
    return count_pairs(seqs.kernel_arrays(), idx, w, classes.size, seqs.n_features), idx


def _identity(x):
    return x


def _first(pair):
    return pair[0]


def _add(a, b):
    return a + b


def _make_loss(features, counts_idx, layout, n_threads):
    seqs, _ = features
    counts, idx = counts_idx
    return CRFLoss(seqs.kernel_arrays(), idx, np.ones(len(seqs)), layout, counts,
                   n_threads=n_threads)


def _evaluate(loss, theta):
    return loss.loss_gradient(theta)


def _add_pairs(a, b):
    return a[0] + b[0], a[1] + b[1]


class _RemoteTerms:
    """The data terms of all partitions as one callable: scatter the weights,
    evaluate every partition where it lives, sum on the cluster."""

    def __init__(self, client, losses, retries=6, scatter_timeout=20):
        self.client = client
        self.losses = losses
        self.retries = retries
        self.scatter_timeout = scatter_timeout
        self.n_evals = 0
        self.bytes_out = 0
        self.seconds = 0.0

    def __call__(self, theta):
        import time
        from concurrent.futures import CancelledError

        from distributed.comm.core import CommClosedError
        from distributed.scheduler import KilledWorker

        start = time.perf_counter()
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        for attempt in range(self.retries + 1):
            try:
                # to one worker; the others fetch it once each as a dependency
                # of their tasks (a broadcast that survives a lost worker)
                fut = self.client.scatter(theta, hash=False, timeout=self.scatter_timeout)
                parts = [self.client.submit(_evaluate, loss, fut, pure=False)
                         for loss in self.losses]
                loss, grad = _tree(self.client, parts, _add_pairs).result()
                break
            except (CommClosedError, OSError, TimeoutError, CancelledError, KilledWorker):
                # a worker went away during this evaluation (with the weights it
                # held, or a partition): Dask recomputes the partitions elsewhere
                # from their source; evaluate again, waiting longer each time
                if attempt == self.retries:
                    raise
                time.sleep(min(2.0 ** attempt, 10.0))
        # what comes off the wire is a read-only buffer; the penalty and
        # the optimiser write into the gradient
        grad = np.array(grad, dtype=np.float64, order="C", copy=True)
        self.n_evals += 1
        self.bytes_out += theta.nbytes
        self.seconds += time.perf_counter() - start
        return loss, grad


# ------------------------------------------------------------------ public
def fit_pipeline(pipeline, corpus, client=None, *, n_threads=1, callback=None):
    """Fit a featurizer + ``LinearChainCRF`` pipeline on a Dask bag, data-parallel.

    Parameters
    ----------
    pipeline : Pipeline
        Two steps: a ``SequenceFeaturizer`` or ``SequenceDictVectorizer``,
        then a ``LinearChainCRF``. Fitted in place (and returned).
    corpus : dask.bag.Bag
        Of ``(sequence, labels)`` pairs, in corpus order across partitions.
    client : distributed.Client, default=None
        The current client if None.
    n_threads : int, default=1
        Kernel threads per partition on its worker.
    callback : callable, default=None
        ``callback(record, theta)`` after every L-BFGS iteration (on the
        driver).

    Returns
    -------
    pipeline
        Fitted in place. Its ``LinearChainCRF`` also records
        ``dask_evaluations_`` (objective evaluations on the cluster) and
        ``dask_stats_`` (``evaluations``, ``seconds`` spent in them on the
        driver's clock, ``bytes_scattered``: the weights sent out).

    Notes
    -----
    Featurizer options that need the whole corpus at once are refused:
    ``accessor_variety`` and ``adjacent_pmi`` (statistics over all the text) and jackknifed
    dictionary features (``dictionary_folds > 1`` with a dictionary; use
    ``dictionary_folds=1``). The CRF's ``early_stopping``, ``warm_start``
    and ``sample_weight`` are not supported here.
    """
    featurizer, crf = _check_pipeline(pipeline)
    client = _client(client)
    parts = client.compute(corpus.to_delayed())        # raw partitions, on the workers
    sizes = client.gather([client.submit(_length, p, pure=False) for p in parts])
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    blank = clone(featurizer)
    stats_f = [client.submit(_partition_stats, blank, p, int(s), pure=False)
               for p, s in zip(parts, starts[:-1])]
    stats = client.gather([client.submit(_summary, f, pure=False) for f in stats_f])
    if not starts[-1]:
        raise ValueError("The corpus is empty: need at least one sequence to fit.")
    classes = _classes(stats)
    # 1. the vocabulary: the partitions' vocabularies (or feature counts) merged
    fitted = clone(featurizer)
    if isinstance(featurizer, SequenceDictVectorizer):
        merged = _tree(client, [client.submit(_dict_counts, f, pure=False)
                                for f, st in zip(stats_f, stats) if st["n_sequences"]],
                       merge_item_counts).result()
        fitted._set_vocabulary(*merged)
    else:
        offsets = np.concatenate([[0], np.cumsum([st["n_tokens"] for st in stats])])
        shifted = [client.submit(_shift, client.submit(_vocabulary, f, pure=False), int(o),
                                 pure=False)
                   for f, o, st in zip(stats_f, offsets[:-1], stats) if st["n_sequences"]]
        vocab = _tree(client, shifted, _merge).result()
        vocab = vocab.keep(vocab.counts >= featurizer.min_freq)
        vocab.first = None
        fitted._vocabulary_ = vocab
    del stats_f
    # 2. features where the data is; pair counts -> layout
    feats = [client.submit(_partition_features, fitted, p, pure=False) for p in parts]
    counts = [client.submit(_partition_counts, f, classes, pure=False) for f in feats]
    only = [client.submit(_first, c, pure=False) for c in counts]
    total = _tree(client, only, _add).result()
    model = clone(crf)
    masks = constraint_masks(model.constraints, classes)
    layout = model._layout(total, masks)
    # a task that returns the layout, not scattered data: if the workers
    # holding it are lost, the scheduler recomputes it from the task
    layout_f = client.submit(_identity, layout, pure=False)
    losses = [client.submit(_make_loss, f, c, layout_f, n_threads, pure=False)
              for f, c in zip(feats, counts)]
    terms = _RemoteTerms(client, losses)
    model._fit_terms([terms], layout, classes, callback=callback)
    model.dask_evaluations_ = terms.n_evals
    model.dask_stats_ = {"evaluations": terms.n_evals, "seconds": terms.seconds,
                         "bytes_scattered": terms.bytes_out}
    # all fitted: only now the user's pipeline changes
    featurizer.__dict__.update(fitted.__dict__)
    crf.__dict__.update(model.__dict__)
    return pipeline


def _check_pipeline(pipeline):
    """``(featurizer, crf)`` of a pipeline ``fit_pipeline`` can fit, with
    their parameters checked; what it cannot distribute is refused."""
    if not (isinstance(pipeline, Pipeline) and len(pipeline.steps) == 2
            and isinstance(pipeline[0], (SequenceFeaturizer, SequenceDictVectorizer))
            and isinstance(pipeline[-1], LinearChainCRF)):
        raise TypeError("fit_pipeline takes a Pipeline of a SequenceFeaturizer (or "
                        "SequenceDictVectorizer) and a LinearChainCRF.")
    featurizer, crf = pipeline[0], pipeline[-1]
    featurizer._validate_params()
    if isinstance(featurizer, SequenceFeaturizer):
        for stat in ("accessor_variety", "adjacent_pmi"):
            if getattr(featurizer, stat) not in (None, False):
                raise ValueError(f"fit_pipeline: {stat} needs statistics over the "
                                 "whole text at once; fit the featurizer locally.")
        if featurizer.dictionary is not None and featurizer.dictionary_folds > 1:
            raise ValueError("fit_pipeline: jackknifed dictionary features "
                             "(dictionary_folds > 1) are not distributed; set "
                             "dictionary_folds=1.")
    if crf.early_stopping or crf.warm_start:
        raise ValueError("fit_pipeline does not support early_stopping or warm_start.")
    crf._validate_params()
    return featurizer, crf


def _length(part):
    return len(part)


def _summary(stats):
    return {k: stats[k] for k in ("labels", "label_kind", "n_sequences", "start")
            + (("n_tokens",) if stats["kind"] == "templates" else ())}


def _vocabulary(stats):
    return stats["vocabulary"]


def _dict_counts(stats):
    return stats["keys"], stats["counts"]


def _classes(stats):
    """The classes of the whole corpus; the partitions must agree on the type
    of their labels, as one fit's sequences must."""
    kinds = [(st["label_kind"], st["start"]) for st in stats if st["label_kind"]]
    if not kinds:
        raise ValueError("The corpus has no labelled token: nothing to learn from.")
    first_kind = kinds[0][0]
    for kind, start in kinds[1:]:
        if kind != first_kind:
            raise TypeError(f"the records from {start} on have {kind} labels but earlier "
                            f"records have {first_kind} labels; use one type for all "
                            "labels (y[...] of record "
                            f"{start} onwards).")
    return np.unique(np.concatenate([st["labels"] for st in stats if st["label_kind"]]))


def predict_bag(pipeline, bag):
    """Labels of a bag of sequences (or of ``(sequence, labels)`` pairs), computed
    partition by partition on the workers: a bag of label lists."""
    def predict_partition(part):
        part = list(part)
        if not part:
            return []
        X = [x[0] if isinstance(x, tuple) and len(x) == 2 else x for x in part]
        return pipeline.predict(X)

    return bag.map_partitions(predict_partition)


def unsafe_cache_dir():
    """The Numba cache directory of this process if others may write to it
    (group- or world-writable), else None. Numba's cache index is a pickle,
    so such a directory lets another user run code in this process."""
    import os
    import stat

    from numba.core.config import CACHE_DIR

    if not CACHE_DIR:
        return None
    try:
        mode = os.stat(CACHE_DIR).st_mode
    except OSError:
        return None
    return CACHE_DIR if mode & (stat.S_IWGRP | stat.S_IWOTH) else None


def _tiny_fit():
    from ._warm_up import compile_kernels

    return compile_kernels(segmenter=False)


def warm_up(client=None):
    """Import skcrf and load its compiled kernels on every worker.

    Numba caches the compiled kernels on disk (``NUMBA_CACHE_DIR``); a fresh
    worker process still pays the import and the cache load on its first
    task, and the compilation too when its cache is empty. Call this once
    after the workers start so that the first fit of a search does not pay it.

    Numba's cache index is a pickle: anyone who can write to the cache
    directory can run code in the processes that read it. Give each user its
    own cache directory (not world-writable), or ship a cache warmed when the
    worker image was built, read-only; never one shared writable directory.

    Returns
    -------
    seconds : dict
        Worker address -> seconds the warm-up took there.
    """
    client = _client(client)
    unsafe = {w: d for w, d in client.run(unsafe_cache_dir).items() if d}
    if unsafe:
        import warnings

        worker, path = next(iter(unsafe.items()))
        warnings.warn(
            f"{len(unsafe)} worker(s) use a Numba cache directory others may write to "
            f"(e.g. {path} on {worker}): its index is a pickle, so whoever writes there "
            "can run code in the workers. Give each user its own cache directory.",
            UserWarning, stacklevel=2)
    return client.run(_tiny_fit)
