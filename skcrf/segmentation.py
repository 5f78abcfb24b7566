"""Chinese word segmentation helpers: words <-> character tags, segmented text."""

from . import _tag_schemes as schemes

__all__ = ["words_to_tags", "tags_to_words", "merge_runs", "read_segmented", "SCHEMES"]

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
