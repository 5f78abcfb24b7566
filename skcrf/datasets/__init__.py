"""Readers for sequence-labelling corpora and the bundled Chinese sample."""

import os

from ..segmentation._tags import read_segmented

__all__ = ["load_sample_cws", "read_segmented", "read_conllu", "read_conll",
           "SAMPLE_CWS_PATH"]

SAMPLE_CWS_PATH = os.path.join(os.path.dirname(__file__), "data", "ud_zh_gsd_sample.txt")


def load_sample_cws():
    """1,000 word-segmented Chinese sentences from UD Chinese GSD (CC BY-SA 4.0).

    Returns
    -------
    sentences : list of list of str
        Each sentence as its list of words.

    Notes
    -----
    The first 1,000 training sentences of the Universal Dependencies Chinese
    GSD treebank; attribution and license in ``skcrf/datasets/data/README.md``.
    """
    return read_segmented(SAMPLE_CWS_PATH)


def read_conllu(path, columns=("form",), encoding="utf-8-sig"):
    """Read a CoNLL-U file.

    Parameters
    ----------
    path : str
    columns : tuple of str, default=("form",)
        CoNLL-U fields to keep: id, form, lemma, upos, xpos, feats, head,
        deprel, deps, misc. With one field, a token is a str; with several, a
        tuple.

    Returns
    -------
    sentences : list of list
        Multi-word token ranges (``1-2``) and empty nodes (``1.1``) are skipped.
    """
    fields = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel",
              "deps", "misc")
    idx = []
    for c in columns:
        if c not in fields:
            raise ValueError(f"Unknown CoNLL-U field {c!r}; expected one of {fields}.")
        idx.append(fields.index(c))
    sents, cur = [], []
    with open(path, encoding=encoding) as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip():
                if cur:
                    sents.append(cur)
                    cur = []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise ValueError(f"{path}:{lineno}: expected 10 tab-separated fields, "
                                 f"got {len(cols)}.")
            if "-" in cols[0] or "." in cols[0]:
                continue
            vals = tuple(cols[i] for i in idx)
            cur.append(vals[0] if len(vals) == 1 else vals)
    if cur:
        sents.append(cur)
    return sents


def read_conll(path, encoding="utf-8-sig", skip_docstart=True):
    """Read a CoNLL column file (CoNLL-2000/2002/2003 style).

    One token a line, columns separated by whitespace, the label in the last
    column, a blank line between sentences.

    Returns
    -------
    tokens : list of list of tuple of str
        The columns before the label, per token (e.g. ``(word, pos)``).
    labels : list of list of str
    """
    X, y, xs, ys = [], [], [], []
    with open(path, encoding=encoding) as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                if xs:
                    X.append(xs)
                    y.append(ys)
                    xs, ys = [], []
                continue
            if skip_docstart and parts[0] == "-DOCSTART-":
                continue
            xs.append(tuple(parts[:-1]))
            ys.append(parts[-1])
    if xs:
        X.append(xs)
        y.append(ys)
    return X, y
