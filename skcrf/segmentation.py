"""Chinese word segmentation helpers: words <-> character tags, segmented text."""

__all__ = ["words_to_tags", "tags_to_words", "read_segmented", "SCHEMES"]

SCHEMES = ("BMES", "BI")


def _check_scheme(scheme):
    if scheme not in SCHEMES:
        raise ValueError(f"Unknown segmentation scheme {scheme!r}; expected one of {SCHEMES}.")


def words_to_tags(words, scheme="BMES"):
    """One tag per character of the words.

    BMES: a one-character word is ``S``; longer words are ``B M ... M E``.
    BI: ``B`` starts every word, ``I`` continues it.

    >>> words_to_tags(["上海", "推", "迎奥运"])
    ['B', 'E', 'S', 'B', 'M', 'E']
    """
    _check_scheme(scheme)
    tags = []
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise TypeError(f"words[{i}] is a {type(w).__name__}, not a str.")
        n = len(w)
        if n == 0:
            raise ValueError(f"words[{i}] is an empty word.")
        if scheme == "BI":
            tags.append("B")
            tags.extend("I" * (n - 1))
        elif n == 1:
            tags.append("S")
        else:
            tags.append("B")
            tags.extend("M" * (n - 2))
            tags.append("E")
    return tags


def tags_to_words(chars, tags):
    """Cut ``chars`` into words at the tags.

    A word starts at a ``B`` or ``S`` tag and after an ``E`` or ``S`` tag;
    every other tag continues the current word. So invalid sequences still give
    a segmentation (a stray ``M`` after ``E`` starts a word; an ``E`` without
    ``B`` ends the current one). Works for BMES and BI tags.

    >>> tags_to_words("上海推迎奥运", ["B", "E", "S", "B", "M", "E"])
    ['上海', '推', '迎奥运']
    >>> tags_to_words("上海推", ["B", "E", "M"])
    ['上海', '推']
    """
    if len(chars) != len(tags):
        raise ValueError(f"{len(chars)} characters but {len(tags)} tags.")
    words = []
    start = 0
    for t in range(1, len(chars) + 1):
        if t == len(chars) or tags[t] in ("B", "S") or tags[t - 1] in ("E", "S"):
            words.append(chars[start:t])
            start = t
    return [w for w in words if w]


def read_segmented(path, encoding="utf-8"):
    """Read segmented text: one sentence per line, words separated by whitespace.

    Any run of whitespace (including full-width U+3000 spaces) separates
    words; empty lines are skipped.

    Returns
    -------
    sentences : list of list of str
    """
    with open(path, encoding=encoding) as fh:
        return [line.split() for line in fh if line.strip()]
