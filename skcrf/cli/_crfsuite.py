"""``skcrf tag`` and ``skcrf dump`` on CRFsuite model files.

CRFsuite's data format, as ``crfsuite tag`` reads it: one item a line, the
reference label first (may be empty), then the attributes, separated by
tabs; an attribute is ``name`` (value 1) or ``name:value``, where ``\\:``
and ``\\\\`` stand for a colon and a backslash inside the name; a blank
line ends a sequence. The output is ``crfsuite tag -r``'s: the reference
label (when the input has one) and the predicted label, tab-separated, a
blank line after each sequence — so ``skcrf eval`` scores it; ``-v1`` adds
``/probability`` (the label's marginal) to the predicted label, ``-n K``
prints the K best sequences, each after a ``# rank probability`` line.
"""

import math

from ._io import UserError, open_inputs, stdout

__all__ = ["tag_crfsuite", "dump_crfsuite"]


def _load(path):
    from .._formats import load_model

    return load_model(path)


def _attribute(field, name, lineno):
    """``(name, value)`` of one CRFsuite attribute field."""
    out, i, n = [], 0, len(field)
    while i < n:
        c = field[i]
        if c == "\\" and i + 1 < n and field[i + 1] in ":\\":
            out.append(field[i + 1])
            i += 2
            continue
        if c == ":":
            try:
                value = float(field[i + 1:])
            except ValueError:
                raise UserError(f"{name}:{lineno}: attribute {field!r}: the value after "
                                "':' is not a number.") from None
            if not math.isfinite(value):
                raise UserError(f"{name}:{lineno}: attribute {field!r}: the value is not "
                                "finite.")
            return "".join(out), value
        out.append(c)
        i += 1
    return "".join(out), 1.0


def _sequences(name, lines, block):
    """Blocks of up to ``block`` sequences: (items, references), where items
    are ``{attribute: value}`` dicts."""
    items, refs, seqs = [], [], []
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\n").rstrip("\r")
        if not line.strip():
            if items:
                seqs.append((items, refs))
                items, refs = [], []
                if len(seqs) >= block:
                    yield seqs
                    seqs = []
            continue
        fields = line.split("\t")
        item = {}
        for f in fields[1:]:
            if f:
                key, value = _attribute(f, name, lineno)
                item[key] = item.get(key, 0.0) + value
        items.append(item)
        refs.append(fields[0])
    if items:
        seqs.append((items, refs))
    if seqs:
        yield seqs


def tag_crfsuite(args):
    crf = _load(args.model)
    out = stdout()
    for name, lines in open_inputs(args.files, args.encoding):
        for block in _sequences(name, lines, args.block):
            X = [items for items, _ in block]
            if args.nbest:
                for (_, refs), best in zip(block, crf.predict_topk(X, k=args.nbest)):
                    for q, (labels, p) in enumerate(best):
                        out.write(f"# {q} {math.exp(p):.6f}\n")
                        _write(out, refs, labels)
                continue
            pred = crf._predict_lists(X)
            if not args.verbose:
                for (_, refs), labels in zip(block, pred):
                    _write(out, refs, labels)
                continue
            marg = crf._marginal_lists(X)
            for (_, refs), labels, P in zip(block, pred, marg):
                shown = [f"{lab}/{m[lab]:.6f}" for lab, m in zip(labels, P)]
                _write(out, refs, shown)
    return 0


def _write(out, refs, labels):
    for ref, lab in zip(refs, labels):
        out.write(f"{ref}\t{lab}\n" if ref else f"{lab}\n")
    out.write("\n")


def dump_crfsuite(args):
    from ..compat.pycrfsuite import dump_text

    crf = _load(args.model)
    stdout().write(dump_text(crf._crfsuite_model(), crf._crfsuite_bytes()))
    return 0
