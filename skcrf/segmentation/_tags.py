"""Words <-> character tags, runs of digits and Latin letters, segmented files.

Pure Python: the model files' runtime uses these too.
"""

import unicodedata

from .. import _tag_schemes as schemes

__all__ = ["SCHEMES", "words_to_tags", "tags_to_words", "merge_runs", "join_graphemes",
           "read_segmented"]

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


_ZWJ = "\u200d"


def _extends(ch):
    """Whether ``ch`` belongs to the grapheme cluster of the character before
    it (Unicode's Grapheme_Extend and the like): combining marks, variation
    selectors, emoji modifiers and tag characters, and the zero-width joiner."""
    cp = ord(ch)
    return (unicodedata.category(ch) in ("Mn", "Me", "Mc") or ch == _ZWJ
            or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF
            or 0x1F3FB <= cp <= 0x1F3FF or 0xE0020 <= cp <= 0xE007F)


def _regional(ch):
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def join_graphemes(words):
    """Join words cut inside a grapheme cluster, which no segmentation may
    split: before a combining mark, a variation selector, an emoji modifier or
    a zero-width joiner, after a joiner (``👩‍💻``), and between the two
    regional indicators of a flag.

    >>> join_graphemes(["👩", "\u200d💻", "好"])
    ['👩\u200d💻', '好']
    """
    if len(words) < 2:
        return list(words)
    out = [words[0]]
    for w in words[1:]:
        prev = out[-1]
        run = len(prev) - len(prev.rstrip("".join(
            chr(c) for c in range(0x1F1E6, 0x1F200))))     # regional indicators at its end
        if _extends(w[0]) or prev[-1] == _ZWJ or (_regional(w[0]) and run % 2 == 1):
            out[-1] = prev + w
        else:
            out.append(w)
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
