"""Chinese word segmentation helpers: words <-> character tags, segmented text."""

import numpy as np

from . import _tag_schemes as schemes

__all__ = ["words_to_tags", "tags_to_words", "merge_runs", "word_start_proba",
           "adopt_new_words", "read_segmented", "SCHEMES"]

#: tag sets for segmentation, see :func:`words_to_tags`
SCHEMES = ("BMES", "BB2B3MES", "BI")


def _check_scheme(scheme):
    if scheme not in SCHEMES:
        raise ValueError(f"Unknown segmentation scheme {scheme!r}; expected one of {SCHEMES}.")


def words_to_tags(words, scheme="BMES"):
    """One tag per character of the words.

    BMES: a one-character word is ``S``; longer words are ``B M ... M E``.
    BB2B3MES (Zhao et al. 2006): the 2nd and 3rd characters of longer words
    are ``B2`` / ``B3`` (``B B2 B3 M ... M E``). BI: ``B`` starts every word,
    ``I`` continues it.

    >>> words_to_tags(["上海", "推", "迎奥运"])
    ['B', 'E', 'S', 'B', 'M', 'E']
    >>> words_to_tags(["上海", "推", "迎奥运", "中华人民"], "BB2B3MES")
    ['B', 'E', 'S', 'B', 'B2', 'E', 'B', 'B2', 'B3', 'E']
    """
    _check_scheme(scheme)
    tags = []
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise TypeError(f"words[{i}] is a {type(w).__name__}, not a str.")
        if not w:
            raise ValueError(f"words[{i}] is an empty word.")
        tags.extend(schemes.word_tags(len(w), scheme))
    return tags


def tags_to_words(chars, tags):
    """Cut ``chars`` into words at the tags.

    A word starts at a tag whose role is begin or single (``B``, ``S``) and
    after one whose role is end or single (``E``, ``S``); every other tag
    continues the current word. So invalid sequences still give a
    segmentation (a stray ``M`` after ``E`` starts a word; an ``E`` without
    ``B`` ends the current one). Works for every segmentation scheme.

    >>> tags_to_words("上海推迎奥运", ["B", "E", "S", "B", "M", "E"])
    ['上海', '推', '迎奥运']
    >>> tags_to_words("上海推", ["B", "E", "M"])
    ['上海', '推']
    """
    if len(chars) != len(tags):
        raise ValueError(f"{len(chars)} characters but {len(tags)} tags.")
    table = schemes.roles("BMES")
    role = [table.get(t, "I") for t in tags]
    words = []
    start = 0
    for t in range(1, len(chars) + 1):
        if t == len(chars) or role[t] in ("B", "S") or role[t - 1] in ("E", "S"):
            words.append(chars[start:t])
            start = t
    return [w for w in words if w]


_DIGITS = frozenset("0123456789０１２３４５６７８９")


def _latin(ch):
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("ａ" <= ch <= "ｚ") \
        or ("Ａ" <= ch <= "Ｚ")


def merge_runs(words):
    """Join words split inside a run of digits or of Latin letters.

    >>> merge_runs(["20", "08", "年", "i", "Phone"])
    ['2008', '年', 'iPhone']
    """
    if len(words) < 2:
        return list(words)
    merged = [words[0]]
    for w in words[1:]:
        a, b = merged[-1][-1], w[0]
        if (a in _DIGITS and b in _DIGITS) or (_latin(a) and _latin(b)):
            merged[-1] += w
        else:
            merged.append(w)
    return merged


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


def _to_revisit(words, proposals, vocabulary):
    """Indices of the sentences where ``proposals`` differ from ``words`` and
    hold a new word of two or more characters: the only ones
    :func:`adopt_new_words` can change."""
    return [k for k, (w, p) in enumerate(zip(words, proposals))
            if w != p and any(len(x) > 1 and x not in vocabulary for x in p)]


def _adopt_all(words, proposals, vocabulary, marginals_of, classes, threshold):
    """:func:`adopt_new_words` over many sentences, replacing ``words[k]`` in
    place; ``marginals_of(indices)`` gives the main model's tag marginals of
    those sentences, asked only for the ones the rule can change."""
    need = _to_revisit(words, proposals, vocabulary)
    if need:
        for k, m in zip(need, marginals_of(need)):
            words[k] = adopt_new_words(words[k], proposals[k], vocabulary,
                                       word_start_proba(m, classes), threshold)


def _split_pieces(texts):
    """The whitespace-free pieces of raw sentences, each with the index of its
    sentence: the units both segmenters tag (whitespace always separates words)."""
    pieces, owner = [], []
    for i, x in enumerate(texts):
        for p in x.split():
            pieces.append(p)
            owner.append(i)
    return pieces, owner


def _join_pieces(words, owner, n_texts, merge):
    """The word lists of ``n_texts`` sentences from their pieces' words
    (:func:`merge_runs` applied to each piece when ``merge``)."""
    out = [[] for _ in range(n_texts)]
    for i, w in zip(owner, words):
        out[i].extend(merge_runs(w) if merge else w)
    return out


def read_segmented(path, encoding="utf-8-sig"):
    """Read segmented text: one sentence per line, words separated by whitespace.

    Any run of whitespace (including full-width U+3000 spaces) separates
    words; empty lines are skipped. The default encoding reads UTF-8 with or
    without a byte-order mark (some SIGHAN files start with one).

    Returns
    -------
    sentences : list of list of str
    """
    with open(path, encoding=encoding) as fh:
        return [line.split() for line in fh if line.strip()]
