"""Raw sentences to word lists: the one segmentation path.

:func:`segment_texts` is what :meth:`WordSegmenter.predict` and a segmenter
model file's :meth:`skcrf.io.Model.segment` both run: split the sentences
into whitespace-free pieces, tag each piece, cut it into words, let the OOV
model's new words replace unsure cuts (:mod:`._new_words`), join runs of
digits or Latin letters, and put each sentence's pieces back together. The
callers differ only in how they tag (an estimator, or a model file's
runtime).
"""

from ._new_words import adopt_all
from ._tags import join_graphemes, merge_runs, tags_to_words

__all__ = ["segment_texts", "split_pieces", "join_pieces"]


def split_pieces(texts):
    """The whitespace-free pieces of raw sentences, each with the index of its
    sentence: the units both segmenters tag (whitespace always separates words)."""
    pieces, owner = [], []
    for i, x in enumerate(texts):
        for p in x.split():
            pieces.append(p)
            owner.append(i)
    return pieces, owner


def join_pieces(words, owner, n_texts, merge):
    """The word lists of ``n_texts`` sentences from their pieces' words: no
    grapheme cluster split (:func:`join_graphemes`), and :func:`merge_runs`
    applied to each piece when ``merge``."""
    out = [[] for _ in range(n_texts)]
    for i, w in zip(owner, words):
        w = join_graphemes(w)
        out[i].extend(merge_runs(w) if merge else w)
    return out


def segment_texts(texts, tag, *, oov_tag=None, marginals=None, known_words=(),
                  classes=(), threshold=0.8, merge=True):
    """Word lists of raw sentences.

    Parameters
    ----------
    texts : list of str
    tag : callable
        ``tag(pieces) -> list of tag lists``: the main model.
    oov_tag : callable, default=None
        The OOV model (same signature), or None.
    marginals : callable, default=None
        ``marginals(indices) -> list of (n_chars, n_classes) arrays``: the main
        model's tag marginals of ``pieces[k]`` for the given k (asked only for
        the pieces the OOV rule can change); needed with ``oov_tag``.
    known_words : container of str
        Words never proposed as new.
    classes : sequence of str
        The main model's tags, in the marginals' column order.
    threshold : float
        See :func:`adopt_new_words`.
    merge : bool
        Join words split inside a run of digits or of Latin letters.
    """
    pieces, owner = split_pieces(texts)
    if not pieces:
        return [[] for _ in texts]
    words = [tags_to_words(p, t) for p, t in zip(pieces, tag(pieces))]
    if oov_tag is not None:
        proposals = [tags_to_words(p, t) for p, t in zip(pieces, oov_tag(pieces))]
        adopt_all(words, proposals, known_words, marginals, classes, threshold)
    return join_pieces(words, owner, len(texts), merge)
