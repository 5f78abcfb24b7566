"""Allowed label transitions for the BIO, BIOES / BIOUL and BMES tag schemes."""

import numpy as np

__all__ = ["allowed_transitions", "repair_tags", "START", "END"]

START, END = "<start>", "<end>"

# prefix -> role: B begin, I inside, E end, S single, O outside
_ROLES = {
    "BIO": {"B": "B", "I": "I", "O": "O"},
    "BIOES": {"B": "B", "I": "I", "E": "E", "S": "S", "O": "O"},
    "BIOUL": {"B": "B", "I": "I", "L": "E", "U": "S", "O": "O"},
    "BMES": {"B": "B", "M": "I", "E": "E", "S": "S"},
}
_ALIASES = {"IOB2": "BIO", "IOBES": "BIOES", "BILOU": "BIOUL"}


def _roles(scheme, labels):
    key = _ALIASES.get(str(scheme).upper(), str(scheme).upper())
    if key not in _ROLES:
        raise ValueError(f"Unknown tag scheme {scheme!r}; expected one of "
                         f"{sorted(_ROLES)} or a list of allowed (from, to) pairs.")
    roles = _ROLES[key]
    out = []
    for lab in labels:
        if not isinstance(lab, str):
            raise ValueError(f"Label {lab!r} is not a str: the {key} scheme needs "
                             "string tags such as 'B-PER'.")
        prefix, _, typ = lab.partition("-")
        if prefix not in roles or (prefix == "O" and typ):
            raise ValueError(
                f"Label {lab!r} does not belong to the {key} scheme (prefixes "
                f"{sorted(roles)}, e.g. 'B-PER'{', or O' if 'O' in roles else ''})."
            )
        out.append((roles[prefix], typ))
    return out


def allowed_transitions(scheme, labels):
    """The (from, to) label pairs a tag scheme allows, with start / end pseudo-labels.

    Parameters
    ----------
    scheme : {"BIO", "BIOES", "BIOUL", "BMES"}
    labels : list of str

    Returns
    -------
    pairs : list of (str, str)
        Allowed pairs; ``"<start>"`` as *from* means "may begin a sequence",
        ``"<end>"`` as *to* means "may end one". Everything else is forbidden.

    Examples
    --------
    >>> pairs = allowed_transitions("BIO", ["B-PER", "I-PER", "O"])
    >>> ("O", "I-PER") in pairs, ("B-PER", "I-PER") in pairs, ("<start>", "I-PER") in pairs
    (False, True, False)
    """
    labels = list(labels)
    roles = _roles(scheme, labels)
    # BIO has no end tag: an entity ends by itself, so B / I may be followed by
    # anything but a continuation of another type, and may end the sequence
    open_ends = _ALIASES.get(str(scheme).upper(), str(scheme).upper()) == "BIO"

    def may_follow(prev, cur):
        (pr, pt), (cr, ct) = prev, cur
        if cr in ("I", "E"):
            return pr in ("B", "I") and pt == ct
        return open_ends or pr not in ("B", "I")

    pairs = [(a, b) for a, ra in zip(labels, roles) for b, rb in zip(labels, roles)
             if may_follow(ra, rb)]
    pairs += [(START, b) for b, (r, _) in zip(labels, roles) if r not in ("I", "E")]
    pairs += [(a, END) for a, (r, _) in zip(labels, roles)
              if open_ends or r not in ("B", "I")]
    return pairs


def constraint_masks(constraints, classes):
    """Boolean masks (allowed[from, to], allowed_start, allowed_end), or None.

    ``constraints`` is None, a scheme name, or an iterable of allowed
    (from, to) pairs that may use ``"<start>"`` / ``"<end>"``; with explicit
    pairs, start and end are unconstrained unless such a pair is listed.
    """
    if constraints is None:
        return None
    labels = list(classes.tolist())
    L = len(labels)
    index = {lab: i for i, lab in enumerate(labels)}
    if isinstance(constraints, str):
        pairs = allowed_transitions(constraints, labels)
        explicit_start = explicit_end = True
    else:
        pairs = list(constraints)
        explicit_start = any(p[0] == START for p in pairs)
        explicit_end = any(p[1] == END for p in pairs)
    trans = np.zeros((L, L), dtype=bool)
    start = np.zeros(L, dtype=bool) if explicit_start else np.ones(L, dtype=bool)
    end = np.zeros(L, dtype=bool) if explicit_end else np.ones(L, dtype=bool)
    for k, pair in enumerate(pairs):
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError(f"constraints[{k}] = {pair!r} is not a (from, to) pair.") from None
        if a == START and b in index:
            start[index[b]] = True
        elif b == END and a in index:
            end[index[a]] = True
        elif a in index and b in index:
            trans[index[a], index[b]] = True
        else:
            unknown = a if a not in index and a != START else b
            raise ValueError(f"constraints[{k}] = {pair!r} names label {unknown!r}, "
                             f"which is not among the training labels {labels}.")
    return trans, start, end


def repair_tags(tags, scheme="BIO"):
    """Read invalid BIO tags the way conlleval does: an ``I-X`` that cannot
    continue an entity (at the start, after ``O`` or after another type)
    becomes ``B-X``. Spans, and so span F1, are unchanged.

    Real corpora contain such tags (CoNLL-2002 Spanish has a few), and
    ``LinearChainCRF(constraints="BIO")`` refuses them in training.

    >>> repair_tags(["I-PER", "I-PER", "O", "I-LOC", "B-ORG", "I-LOC"])
    ['B-PER', 'I-PER', 'O', 'B-LOC', 'B-ORG', 'B-LOC']
    """
    key = _ALIASES.get(str(scheme).upper(), str(scheme).upper())
    if key != "BIO":
        raise ValueError(f"repair_tags supports the BIO scheme only, got {scheme!r}.")
    out, prev = [], "O"
    for tag in tags:
        if tag.startswith("I-") and (prev == "O" or prev[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        out.append(tag)
        prev = tag
    return out
