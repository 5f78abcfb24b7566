"""Training where the data lives: a pipeline fitted on a Dask cluster.

Needs the ``dask`` extra (``pip install "skcrf[dask]"``: ``dask[distributed]``).

:func:`fit_pipeline` fits a ``SequenceFeaturizer`` (or ``SequenceDictVectorizer``)
+ ``LinearChainCRF`` pipeline on a ``dask.bag.Bag`` of ``(sequence, labels)``
pairs, each partition staying on the worker that holds it:

1. every partition counts its feature keys (hashed template instances, or
   feature-dict items) and its labels; the counts are summed in a tree
   reduction on the cluster: the vocabulary and the classes;
2. every partition featurises its sequences with that vocabulary and counts
   its (feature, label) pairs; the pair counts are summed the same way: the
   parameter layout, built on the driver;
3. every partition keeps a :class:`skcrf._objective.CRFLoss` of its data;
   per evaluation of the objective only the weights go out (scattered once
   to every worker) and each partition's ``(loss, gradient)`` comes back,
   summed in a tree reduction; the penalty is added once on the driver,
   where scipy's L-BFGS-B runs.

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

import numpy as np

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
def _split_pairs(part):
    part = list(part)
    X = [x for x, _ in part]
    y = [list(lab) for _, lab in part]
    return X, y


def _template_keys(featurizer, X):
    """Units, template set and keys of a partition (a featurizer's templates)."""
    from ._units import read_units

    units = read_units(X)
    templates = featurizer._make_templates(units)
    return units, templates, templates.keys(units, fitting=True)


def _partition_stats(featurizer, part):
    """Feature keys of a partition with counts and first positions; labels."""
    from ._dict_vectorizer import SequenceDictVectorizer, _scan, _Vocabulary
    from ._units import read_units

    X, y = _split_pairs(part)
    labels = sorted({lab for seq in y for lab in seq}, key=repr)
    if isinstance(featurizer, SequenceDictVectorizer):
        vocab = _Vocabulary({}, grow=True)
        scanned = _scan(X, vocab)
        counts = np.bincount(scanned.indices + 1, minlength=len(vocab.keys) + 1)[1:]
        return {"kind": "dict", "keys": vocab.keys, "counts": counts, "labels": labels,
                "n_sequences": len(X), "n_tokens": sum(map(len, X))}
    units = read_units(X)
    templates = featurizer._make_templates(units)
    index = templates.index(units, fitting=True)
    return {"kind": "templates", "keys": index.keys, "counts": index.counts,
            "first": index.first, "n_slots": templates.n_slots,
            "labels": labels, "n_sequences": units.n_sequences, "n_tokens": units.n_tokens,
            "input_kind": units.kind, "n_columns": units.n_columns}


def _merge_dict_stats(a, b):
    counts = dict(zip(a["keys"], a["counts"].tolist()))
    keys = list(a["keys"])
    for k, c in zip(b["keys"], b["counts"].tolist()):
        if k in counts:
            counts[k] += c
        else:
            counts[k] = c
            keys.append(k)
    return {"kind": "dict", "keys": keys, "counts": np.array([counts[k] for k in keys]),
            "labels": sorted(set(a["labels"]) | set(b["labels"]), key=repr)}


def _merge_template_stats(a, b):
    """Sum counts; keep the earliest global first position (``a`` precedes ``b``)."""
    keys = np.concatenate([a["keys"], b["keys"]])
    counts = np.concatenate([a["counts"], b["counts"]])
    first = np.concatenate([a["first"], b["first"]])
    order = np.lexsort((first, keys))
    keys, counts, first = keys[order], counts[order], first[order]
    new = np.concatenate([[True], keys[1:] != keys[:-1]])
    group = np.cumsum(new) - 1
    return {"kind": "templates", "keys": keys[new],
            "counts": np.bincount(group, weights=counts).astype(np.int64),
            "first": first[new], "labels": sorted(set(a["labels"]) | set(b["labels"]),
                                                  key=repr)}


def _globalise(stats, row_offset):
    """Flat first positions of a partition -> positions in the whole corpus."""
    out = dict(stats)
    if stats["kind"] == "templates":
        out["first"] = stats["first"] + row_offset * stats["n_slots"]
    else:
        out["counts"] = np.asarray(stats["counts"])
    return out


def _partition_features(featurizer, part, fitted, owned_first):
    """A partition's Sequences with the global vocabulary, and the readable
    codes of the features whose first occurrence it holds."""
    from ._dict_vectorizer import SequenceDictVectorizer

    X, y = _split_pairs(part)
    if isinstance(featurizer, SequenceDictVectorizer):
        return fitted.transform(X), y, None
    units, templates, keys = _template_keys(fitted, X)
    seqs = fitted._to_sequences(keys, units)
    codes = None
    if owned_first is not None and owned_first.size:
        rows, slots = np.divmod(owned_first, keys.shape[1])
        codes = templates.unit_codes(units, rows, slots, keys=keys[rows, slots])
    return seqs, y, codes


# ------------------------------------------------------------------ CRF side
def _partition_counts(features, classes, sample_weight=None):
    from ._layout import count_pairs

    seqs, y, _ = features
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
    from ._objective import CRFLoss

    seqs, _, _ = features
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
        # scipy's L-BFGS-B write into the gradient
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
    from sklearn.base import clone
    from sklearn.pipeline import Pipeline

    from ._crf import LinearChainCRF
    from ._dict_vectorizer import SequenceDictVectorizer
    from ._featurizer import SequenceFeaturizer
    from ._constraints import constraint_masks

    if not (isinstance(pipeline, Pipeline) and len(pipeline.steps) == 2
            and isinstance(pipeline[0], (SequenceFeaturizer, SequenceDictVectorizer))
            and isinstance(pipeline[-1], LinearChainCRF)):
        raise TypeError("fit_pipeline takes a Pipeline of a SequenceFeaturizer (or "
                        "SequenceDictVectorizer) and a LinearChainCRF.")
    featurizer, crf = pipeline[0], pipeline[-1]
    if isinstance(featurizer, SequenceFeaturizer):
        featurizer._validate_params()
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
    client = _client(client)
    parts = client.compute(corpus.to_delayed())        # raw partitions, on the workers
    blank = clone(featurizer)
    stats = client.gather([client.submit(_partition_stats, blank, p, pure=False)
                           for p in parts])
    if not any(s["n_sequences"] for s in stats):
        raise ValueError("The corpus is empty: need at least one sequence to fit.")
    # 1. vocabulary and classes: a sum of per-partition counts
    if isinstance(featurizer, SequenceDictVectorizer):
        merged = stats[0]
        for s in stats[1:]:
            merged = _merge_dict_stats(merged, s)
        keep = np.asarray(merged["counts"]) >= featurizer.min_freq
        fitted = clone(featurizer)
        fitted.vocabulary_ = {k: j for j, k in enumerate(
            k for k, ok in zip(merged["keys"], keep) if ok)}
        fitted.feature_counts_ = np.asarray(merged["counts"])[keep].astype(np.int64)
        fitted.n_features_out_ = len(fitted.vocabulary_)
        owned = [None] * len(parts)
    else:
        offsets = np.concatenate([[0], np.cumsum([s["n_tokens"] for s in stats])])
        glob = [_globalise(s, int(o)) for s, o in zip(stats, offsets[:-1])]
        merged = glob[0]
        for g in glob[1:]:
            merged = _merge_template_stats(merged, g)
        ok = merged["counts"] >= featurizer.min_freq
        order = np.argsort(merged["first"][ok], kind="stable")
        vocab_keys = np.ascontiguousarray(merged["keys"][ok][order])
        first = merged["first"][ok][order]
        n_slots = stats[0]["n_slots"]
        rows = first // n_slots
        owner = np.searchsorted(offsets, rows, side="right") - 1
        fitted = clone(featurizer)
        fitted.input_kind_ = stats[0]["input_kind"]
        fitted.n_columns_ = stats[0]["n_columns"]
        fitted.n_features_out_ = int(vocab_keys.size)
        fitted.feature_counts_ = merged["counts"][ok][order]
        fitted._vocab_keys_ = vocab_keys
        fitted._feature_slots_ = (first % n_slots).astype(np.int32)
        owned = [first[owner == p] - offsets[p] * n_slots for p in range(len(parts))]
    classes = np.unique(np.array([lab for s in stats for lab in s["labels"]]))
    if classes.size == 0:
        raise ValueError("The corpus has no labelled token: nothing to learn from.")
    # 2. features where the data is; the codes of the features each partition saw first
    feats = [client.submit(_partition_features, blank, p, fitted, o, pure=False)
             for p, o in zip(parts, owned)]
    if isinstance(featurizer, SequenceFeaturizer):
        from ._units import read_units

        first_part = next(p for p, st in zip(parts, stats) if st["n_sequences"])
        sample_x = client.submit(lambda part: list(part)[0][0], first_part).result()
        fitted._templates_ = fitted._make_templates(read_units([sample_x]))
        codes = np.zeros((vocab_keys.size, fitted._templates_.n_parts), dtype=np.int32)
        strings = []
        got = client.gather([client.submit(lambda f: f[2], f) for f in feats])
        for p, c in enumerate(got):
            if c is None:
                continue
            pc, ps = c
            pc = np.where(pc >= 0, pc + len(strings), pc)
            codes[owner == p] = pc
            strings += ps
        fitted._feature_codes_ = codes
        fitted._feature_strings_ = strings
    # 3. pair counts -> layout
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


def _tiny_fit():
    import time

    t = time.perf_counter()
    from ._crf import LinearChainCRF

    X = [np.eye(3), np.eye(3)[:2]]
    y = [["a", "b", "a"], ["b", "a"]]
    LinearChainCRF(max_iter=3).fit(X, y).predict(X)
    LinearChainCRF(max_iter=3, n_jobs=2).fit(X, y).predict_marginals(X)
    return time.perf_counter() - t


def warm_up(client=None):
    """Import skcrf and load its compiled kernels on every worker.

    Numba caches the compiled kernels on disk (``NUMBA_CACHE_DIR``); a fresh
    worker process still pays the import and the cache load on its first
    task, and the compilation too when its cache is empty. Call this once
    after the workers start (and point them at a shared cache directory that
    was filled once) so that the first fit of a search does not pay it.

    Returns
    -------
    seconds : dict
        Worker address -> seconds the warm-up took there.
    """
    return _client(client).run(_tiny_fit)
