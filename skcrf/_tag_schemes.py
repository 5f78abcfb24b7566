"""Tag schemes: the one table that constraints, span metrics and segmentation share.

Every scheme maps its tag prefixes to conlleval's roles: ``B`` begin, ``I``
inside, ``E`` end, ``S`` single, ``O`` outside. A tag is ``PREFIX-TYPE``
(``B-PER``) or a bare prefix (``O``; the segmentation tags ``B``, ``M``, ``E``,
``S``, whose type is ``""``).
"""

__all__ = ["SCHEMES", "SCHEME_NAMES", "canonical", "roles", "split_tag", "parse_labels",
           "open_ended", "word_tags", "successors"]

# scheme -> prefix -> role
SCHEMES = {
    "BIO": {"B": "B", "I": "I", "O": "O"},
    "BIOES": {"B": "B", "I": "I", "E": "E", "S": "S", "O": "O"},
    "BIOUL": {"B": "B", "I": "I", "L": "E", "U": "S", "O": "O"},
    "BMES": {"B": "B", "M": "I", "E": "E", "S": "S"},
    "BI": {"B": "B", "I": "I"},
    # Zhao et al. (2006): the 2nd / 3rd characters of a word have tags of their own
    "BB2B3MES": {"B": "B", "B2": "I", "B3": "I", "M": "I", "E": "E", "S": "S"},
}
# schemes whose tag order inside a chunk the roles alone do not say:
# tag -> the tags that may follow it ("<end>" for the end of the sequence),
# and "<start>" -> the tags that may begin one
_SUCCESSORS = {
    "BB2B3MES": {"<start>": {"B", "S"}, "B": {"B2", "E"}, "B2": {"B3", "E"},
                 "B3": {"M", "E"}, "M": {"M", "E"}, "E": {"B", "S", "<end>"},
                 "S": {"B", "S", "<end>"}},
}
_ALIASES = {"IOB2": "BIO", "IOBES": "BIOES", "BILOU": "BIOUL"}
#: every name a scheme may be given by (aliases included)
SCHEME_NAMES = frozenset(SCHEMES) | frozenset(_ALIASES)
# schemes without an end tag: a chunk ends wherever the next one starts
_OPEN_ENDED = {"BIO", "BI"}


def canonical(scheme):
    """The scheme's name in ``SCHEMES`` (aliases resolved), or a ValueError."""
    key = str(scheme).upper()
    key = _ALIASES.get(key, key)
    if key not in SCHEMES:
        names = sorted(SCHEMES) + sorted(_ALIASES)
        raise ValueError(f"Unknown tag scheme {scheme!r}; expected one of {names}.")
    return key


def roles(scheme):
    """``prefix -> role`` of a scheme."""
    return SCHEMES[canonical(scheme)]


def open_ended(scheme):
    """True for schemes without an end tag (BIO, BI)."""
    return canonical(scheme) in _OPEN_ENDED


def split_tag(tag, prefix_roles):
    """``('B', 'PER')`` from ``'B-PER'``; ``('O', '')`` from ``'O'``."""
    tag = str(tag)
    prefix, _, typ = tag.partition("-")
    if prefix not in prefix_roles:
        raise ValueError(f"Tag {tag!r} does not belong to the scheme "
                         f"{sorted(prefix_roles)}.")
    return prefix_roles[prefix], typ


def parse_labels(scheme, labels):
    """``[(role, type), ...]`` of every label, refusing labels outside the scheme."""
    key = canonical(scheme)
    table = SCHEMES[key]
    out = []
    for lab in labels:
        if not isinstance(lab, str):
            raise ValueError(f"Label {lab!r} is not a str: the {key} scheme needs "
                             "string tags such as 'B-PER'.")
        prefix, _, typ = lab.partition("-")
        if prefix not in table or (table[prefix] == "O" and typ):
            raise ValueError(
                f"Label {lab!r} does not belong to the {key} scheme (prefixes "
                f"{sorted(table)}, e.g. 'B-PER'{', or O' if 'O' in table else ''})."
            )
        out.append((table[prefix], typ))
    return out


def successors(scheme):
    """``tag -> allowed next tags`` for schemes that fix the order of tags
    inside a chunk (BB2B3MES), or None when the roles say it all."""
    return _SUCCESSORS.get(canonical(scheme))


def word_tags(n, scheme):
    """The tags of one word (chunk) of ``n`` units in a segmentation scheme."""
    key = canonical(scheme)
    if key == "BI":
        return ["B"] + ["I"] * (n - 1)
    if key == "BMES":
        return ["S"] if n == 1 else ["B"] + ["M"] * (n - 2) + ["E"]
    if key == "BB2B3MES":
        if n == 1:
            return ["S"]
        inner = ["B2", "B3"][:n - 2] + ["M"] * max(0, n - 4)
        return ["B"] + inner + ["E"]
    raise ValueError(f"{scheme!r} is not a word segmentation scheme; use 'BMES', "
                     "'BB2B3MES' or 'BI'.")
