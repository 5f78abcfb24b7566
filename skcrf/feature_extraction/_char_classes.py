"""What a unit is: character types, word shapes, word-segmentation classes.

Pure functions of one character or word (no NumPy): the unit sources of
:mod:`._sources` apply them once per distinct unit.
"""

import unicodedata

__all__ = ["CHAR_TYPES", "CWS_CLASSES", "char_type", "word_shape", "cws_class",
           "normalised_char"]

CHAR_TYPES = ("digit", "latin", "punct", "cjk", "other")


def char_type(ch):
    """Type of one character: digit, latin, punct, cjk or other.

    Full-width forms (``２``, ``Ａ``, ``，``) are classified like their ASCII
    counterparts.

    >>> [char_type(c) for c in "2２aＡ，。上x😀"]
    ['digit', 'digit', 'latin', 'latin', 'punct', 'punct', 'cjk', 'latin', 'other']
    """
    cp = ord(ch)
    if (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x3134F
            or 0xF900 <= cp <= 0xFAFF or cp == 0x3007):
        return "cjk"
    norm = unicodedata.normalize("NFKC", ch)
    c = norm[0] if norm else ch
    if c.isdigit() or unicodedata.category(c) == "Nd":
        return "digit"
    if ("a" <= c <= "z") or ("A" <= c <= "Z") or (
            c.isalpha() and "LATIN" in unicodedata.name(c, "")):
        return "latin"
    cat = unicodedata.category(c)
    if cat[0] == "P" or (cat[0] == "S" and ord(c) < 0x3000):
        return "punct"  # punctuation, and symbols such as + % $ (not emoji)
    return "other"


def word_shape(word):
    """Word shape: X / x / d for upper / lower / digit, other characters kept,
    runs of one symbol cut at 4.

    >>> [word_shape(w) for w in ("Melbourne", "12", "U.S.", "ABC-9")]
    ['Xxxxx', 'dd', 'X.X.', 'XXX-d']
    """
    out = []
    last, run = None, 0
    for c in word:
        if c.isupper():
            s = "X"
        elif c.islower():
            s = "x"
        elif c.isdigit():
            s = "d"
        else:
            s = c
        if s == last:
            run += 1
        else:
            last, run = s, 1
        if run <= 4:
            out.append(s)
    return "".join(out)


CWS_CLASSES = ("digit", "date", "latin", "punct", "other")

# simplified and traditional forms (兩, 時, 號: corpora in traditional characters)
_NUMERALS = set("〇一二三四五六七八九十百千万亿零两兩壹贰叁肆伍陆柒捌玖拾佰仟萬億")

_DATE_UNITS = set("年月日时時分秒号號點点")


def cws_class(ch):
    """Segmentation class of a character.

    >>> [cws_class(c) for c in "2２三年Ａ，上"]
    ['digit', 'digit', 'digit', 'date', 'latin', 'punct', 'other']
    """
    if ch in _NUMERALS:
        return "digit"
    if ch in _DATE_UNITS:
        return "date"
    t = char_type(ch)
    return t if t in ("digit", "latin", "punct") else "other"


def normalised_char(ch):
    """The character with full-width forms folded to ASCII, every digit as
    ``0`` and every Latin letter as ``A`` (Chinese numerals kept).

    >>> [normalised_char(c) for c in "２0ｂ年三"]
    ['0', '0', 'A', '年', '三']
    """
    c = unicodedata.normalize("NFKC", ch)
    c = c[0] if len(c) == 1 else ch
    cls = cws_class(ch)
    if cls == "digit" and ch not in _NUMERALS:
        return "0"
    if cls == "latin":
        return "A"
    return c
