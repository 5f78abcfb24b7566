"""Jackknifed statistics: while fitting, a training sentence reads features
computed without its own part of the text, as new text will.

Dictionary, accessor-variety and PMI features are counted on the training
text itself; a sentence's own words and contexts then look better known than
anything at prediction time. The training sentences are split into
contiguous folds (:func:`jackknife_folds`) and each reads the statistics of
the others. Shared by :mod:`._dictionary`, :mod:`._accessor_variety` and
:mod:`._pmi`.
"""

import numpy as np


def jackknife_folds(n_sequences, n_folds):
    """Fold of each training sequence: ``n_folds`` contiguous blocks.

    Blocks, not round-robin: corpora come in document order, and a name that
    recurs in neighbouring sentences must fall in one fold to be as unknown
    there as in new documents (round-robin folds would leave far fewer words
    unknown to the other folds than new text has).
    """
    return np.arange(n_sequences, dtype=np.int64) * n_folds // max(n_sequences, 1)


def _code_points(words):
    cps = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"),
                        dtype=np.uint32).astype(np.int64)
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    return cps, np.concatenate([[0], np.cumsum(lengths)])


def _statistics_corpus(sequences, texts, folds):
    """``(cps, offsets, seq_fold)`` of the text the statistics count: the
    training sequences (code-point arrays; in ``folds`` contiguous folds when
    ``folds > 1``) followed by the unlabeled ``texts`` (fold -1: every fold's)."""
    extra, extra_offsets = _code_points(list(texts))
    lengths = [len(q) for q in sequences] + np.diff(extra_offsets).tolist()
    cps = np.concatenate([np.asarray(q, dtype=np.int64) for q in sequences] + [extra])
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    seq_fold = np.full(offsets.size - 1, -1, dtype=np.int64)
    if folds > 1:
        seq_fold[:len(sequences)] = jackknife_folds(len(sequences), folds)
    return cps, offsets, seq_fold


def _fit_state(template, name, units, fitting, what):
    """What a template built for its own training text (attribute ``name``:
    the jackknifed statistics each training position reads) when it writes
    the keys of that text (``fitting``): returned once, then dropped (never
    saved nor pickled); None otherwise."""
    state = template.__dict__.get(name)
    if not fitting or state is None:
        return None
    if template._n_train != (units.n_sequences, units.n_tokens):
        raise ValueError(f"jackknifed {what}: fit on other text than the statistics "
                         "were built from.")
    del template.__dict__[name]
    return state


def _statistics_read(template, units, fitting, what):
    """``(fold_table, seq_fold)``: what each sequence of ``units`` reads. In
    the fit_transform of a jackknifed template, a sequence of fold f reads
    its fold's leave-one-out table (see :func:`_fit_state`); otherwise every
    sequence reads all the statistics (fold -1)."""
    fold_table = _fit_state(template, "_fold_table", units, fitting, what)
    if fold_table is not None:
        return fold_table, jackknife_folds(units.n_sequences, template.folds)
    return np.zeros((1, 2), dtype=np.uint64), np.full(units.n_sequences, -1, dtype=np.int64)
