"""Allowed label transitions for the BIO, BIOES / BIOUL and BMES tag schemes."""

import numpy as np

from . import _tag_schemes as schemes
from ._arrays import boundary_masks, sequence_of

__all__ = ["allowed_transitions", "repair_tags", "constraint_masks",
           "check_labels_allowed", "START", "END"]

START, END = "<start>", "<end>"


def allowed_transitions(scheme, labels):
    """The (from, to) label pairs a tag scheme allows, with start / end pseudo-labels.

    Parameters
    ----------
    scheme : {"BIO", "BIOES", "BIOUL", "BMES", "BB2B3MES", "BI"}
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
    roles = schemes.parse_labels(scheme, labels)
    order = schemes.successors(scheme)
    if order is not None:      # the scheme fixes the order of tags inside a chunk
        return ([(a, b) for a in labels for b in labels if b in order.get(a, ())]
                + [(START, b) for b in labels if b in order[START]]
                + [(a, END) for a in labels if END in order.get(a, ())])
    # BIO has no end tag: an entity ends by itself, so B / I may be followed by
    # anything but a continuation of another type, and may end the sequence
    open_ends = schemes.open_ended(scheme)

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
    Pairs that name a label absent from ``classes`` do not apply (a
    cross-validation fold may lack a rare label).
    """
    if constraints is None:
        return None
    labels = list(classes.tolist())
    L = len(labels)
    index = {lab: i for i, lab in enumerate(labels)}
    if isinstance(constraints, str):
        pairs = allowed_transitions(constraints, labels)
    else:
        pairs = list(constraints)
        for k, pair in enumerate(pairs):
            if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") \
                    or len(pair) != 2:
                raise ValueError(f"constraints[{k}] = {pair!r} is not a (from, to) pair.")
        # pairs naming a label absent from classes do not apply
        pairs = [(a, b) for a, b in pairs
                 if (a == START or a in index) and (b == END or b in index)]
    trans = np.zeros((L, L), dtype=bool)
    # with explicit pairs, the boundaries are free unless a pair names them
    start = np.ones(L, dtype=bool)
    end = np.ones(L, dtype=bool)
    if isinstance(constraints, str) or any(a == START for a, _ in pairs):
        start[:] = False
    if isinstance(constraints, str) or any(b == END for _, b in pairs):
        end[:] = False
    for a, b in pairs:
        if a == START and b != END:
            start[index[b]] = True
        elif b == END and a != START:
            end[index[a]] = True
        elif a != START and b != END:
            trans[index[a], index[b]] = True
    return trans, start, end


def check_labels_allowed(y_idx, offsets, classes, masks):
    """Refuse training labels that contain a transition the constraints forbid.

    ``masks`` is what :func:`constraint_masks` returns; the error names the
    sequence and position of the first violation.
    """
    trans_ok, start_ok, end_ok = masks
    first, last = boundary_masks(offsets)
    bad = np.zeros(y_idx.size, dtype=bool)
    if y_idx.size > 1:
        bad[1:] = ~first[1:] & ~trans_ok[y_idx[:-1], y_idx[1:]]
    bad |= first & ~start_ok[y_idx]
    bad |= last & ~end_ok[y_idx]
    if not bad.any():
        return
    k = int(np.flatnonzero(bad)[0])
    s = int(sequence_of(offsets, k))
    names = classes.tolist()
    lab = names[y_idx[k]]
    if first[k] and not start_ok[y_idx[k]]:
        what = f"a sequence may not start with {lab!r}"
    elif not first[k] and not trans_ok[y_idx[k - 1], y_idx[k]]:
        what = f"{names[y_idx[k - 1]]!r} -> {lab!r} is not allowed"
    else:
        what = f"a sequence may not end with {lab!r}"
    hint = (" (skcrf.repair_tags reads invalid BIO tags as conlleval does)"
            if "I-" in str(lab) else "")
    raise ValueError(f"y[{s}] position {k - offsets[s]}: {what} by the constraints.{hint}")


def repair_tags(tags, scheme="BIO"):
    """Read invalid BIO tags the way conlleval does: an ``I-X`` that cannot
    continue an entity (at the start, after ``O`` or after another type)
    becomes ``B-X``. Spans, and so span F1, are unchanged.

    Real corpora contain such tags (CoNLL-2002 Spanish has a few), and
    ``LinearChainCRF(constraints="BIO")`` refuses them in training.

    >>> repair_tags(["I-PER", "I-PER", "O", "I-LOC", "B-ORG", "I-LOC"])
    ['B-PER', 'I-PER', 'O', 'B-LOC', 'B-ORG', 'B-LOC']
    """
    if schemes.canonical(scheme) != "BIO":
        raise ValueError(f"repair_tags supports the BIO scheme only, got {scheme!r}.")
    out, prev = [], "O"
    for tag in tags:
        if tag.startswith("I-") and (prev == "O" or prev[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        out.append(tag)
        prev = tag
    return out
