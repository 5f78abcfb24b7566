"""New words from a second model: where the main segmenter splits them unsurely.

A model with dictionary features segments known words better and new words
worse than one with character features only. :func:`adopt_new_words` takes
the character model's new words where every cut the main model put inside
them is unsure (:func:`word_start_proba` below a threshold);
:func:`adopt_all` applies it to many sentences, asking for the main model's
marginals only where it can change something. NumPy only.
"""

__all__ = ["word_start_proba", "adopt_new_words", "adopt_all", "to_revisit"]

import numpy as np

from .. import _tag_schemes as schemes


def word_start_proba(marginals, classes):
    """The probability that a word starts at each character.

    Parameters
    ----------
    marginals : ndarray of shape (n_chars, n_classes)
        A CRF's tag marginals for one sentence (an element of
        :meth:`LinearChainCRF.predict_marginals`).
    classes : sequence of str
        The tags of its columns (``crf.classes_``) in any segmentation scheme.

    Returns
    -------
    ndarray of shape (n_chars,)
        The summed marginals of the tags that start a word (``B``, ``S``).
    """
    marginals = np.asarray(marginals, dtype=np.float64)
    if marginals.ndim != 2 or marginals.shape[1] != len(classes):
        raise ValueError(f"marginals must have shape (n_chars, {len(classes)}), got "
                         f"{marginals.shape}.")
    table = schemes.roles("BMES")
    cols = [j for j, c in enumerate(classes) if table.get(str(c), "I") in ("B", "S")]
    if not cols:
        raise ValueError(f"none of the classes {list(classes)} starts a word (B or S).")
    return marginals[:, cols].sum(axis=1)


def adopt_new_words(words, proposals, vocabulary, start_proba, threshold=0.8):
    """Take another segmenter's new words where the main one splits them unsurely.

    A model with dictionary features segments known words better and new
    words worse than one with character features only: it cuts a new word
    into known pieces. This combines the two: a word of ``proposals`` (the
    character model's segmentation of the same sentence) of two or more
    characters that is not in ``vocabulary`` replaces the main model's words
    over the same span when that span is whole in ``words`` (a word starts at
    its first character and after its last) and every word start the main
    model put inside it has probability below ``threshold``.
    ``WordSegmenter`` does this by default (``oov_model="auto"``, on without
    ``unlabeled_text``).

    Parameters
    ----------
    words : list of str
        The main segmentation of one sentence.
    proposals : list of str
        Another segmentation of the same sentence.
    vocabulary : container of str
        Known words (e.g. the training words): never proposed as new.
    start_proba : array-like of shape (n_chars,)
        The main model's probability of a word start at each character
        (:func:`word_start_proba`).
    threshold : float, default=0.8
        Main-model word starts at least this probable are kept.

    Returns
    -------
    list of str

    >>> adopt_new_words(["上海", "浦", "东开"], ["上海", "浦东开"], {"上海"},
    ...                 [0.99, 0.01, 0.9, 0.6, 0.3])
    ['上海', '浦东开']
    """
    text = "".join(words)
    if "".join(proposals) != text:
        raise ValueError("words and proposals must segment the same text; they join to "
                         f"{text[:30]!r} and {''.join(proposals)[:30]!r}.")
    start_proba = np.asarray(start_proba, dtype=np.float64)
    if start_proba.shape != (len(text),):
        raise ValueError(f"start_proba must have one value per character ({len(text)}), "
                         f"got shape {start_proba.shape}.")
    starts = [False] * (len(text) + 1)
    pos = 0
    for w in words:
        starts[pos] = True
        pos += len(w)
    starts[pos] = True
    keep = list(starts)
    pos = 0
    for w in proposals:
        s, e = pos, pos + len(w)
        pos = e
        if e - s < 2 or not (starts[s] and starts[e]):
            continue
        inner = [t for t in range(s + 1, e) if starts[t]]
        if inner and w not in vocabulary and max(start_proba[inner]) < threshold:
            for t in inner:
                keep[t] = False
    cuts = [t for t, k in enumerate(keep) if k]
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


def to_revisit(words, proposals, vocabulary):
    """Indices of the sentences where ``proposals`` differ from ``words`` and
    hold a new word of two or more characters: the only ones
    :func:`adopt_new_words` can change."""
    return [k for k, (w, p) in enumerate(zip(words, proposals))
            if w != p and any(len(x) > 1 and x not in vocabulary for x in p)]


def adopt_all(words, proposals, vocabulary, marginals_of, classes, threshold):
    """:func:`adopt_new_words` over many sentences, replacing ``words[k]`` in
    place; ``marginals_of(indices)`` gives the main model's tag marginals of
    those sentences, asked only for the ones the rule can change."""
    need = to_revisit(words, proposals, vocabulary)
    if need:
        if marginals_of is None:
            raise ValueError("adopting new words needs the main model's marginals.")
        for k, m in zip(need, marginals_of(need)):
            words[k] = adopt_new_words(words[k], proposals[k], vocabulary,
                                       word_start_proba(m, classes), threshold)
