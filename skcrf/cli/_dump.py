"""``skcrf dump``: a model's transitions and strongest state features."""

import numpy as np

from .._formats import model_format, read_crfpp_file
from ..io._model import read_model
from ._io import stdout

__all__ = ["cmd_dump"]


def cmd_dump(args):
    if model_format(args.model) == "crfsuite":
        from ._crfsuite import dump_crfsuite

        return dump_crfsuite(args)     # as `crfsuite dump` prints it
    if model_format(args.model) == "crfpp":
        return _dump_crfpp(read_crfpp_file(args.model))
    model = read_model(args.model)
    out = stdout()
    labels = [str(lab) for lab in model.labels]
    w = max(map(len, labels + ["<start>"]))
    cell = max(w, 8)
    has_ends = bool(model.weights.start.any() or model.weights.end.any())
    out.write("transitions (from \\ to)" + ("" if has_ends else "; no start/end") + "\n")
    out.write(" " * w + "".join(f" {lab:>{cell}}" for lab in labels) + "\n")
    for lab, row in zip(labels, model.weights.A):
        out.write(f"{lab:>{w}}" + "".join(f" {v:>{cell}.3f}" for v in row) + "\n")
    if has_ends:
        for name, row in (("<start>", model.weights.start), ("<end>", model.weights.end)):
            out.write(f"{name:>{w}}" + "".join(f" {v:>{cell}.3f}" for v in row) + "\n")
    if args.top:
        names = model.feature_names()
        W = model.weights.W
        for j, lab in enumerate(labels):
            order = np.argsort(-W[:, j], kind="stable")[:args.top]
            out.write(f"\ntop {args.top} state features of {lab}:\n")
            for i in order:
                if W[i, j] > 0:
                    out.write(f"  {W[i, j]:9.4f}  {names[i]}\n")
    if model.oov is not None:
        out.write(f"\nOOV model (character features only; not shown): "
                  f"{model.oov.n_features:,} features; {len(model.known_words):,} known "
                  "words never proposed as new\n")
    return 0


def _dump_crfpp(model):
    """A CRF++ model: its header, labels, templates and transitions (feature
    names live in the model's trie and are not listed)."""
    out = stdout()
    out.write(f"CRF++ model: {len(model.labels)} labels, {model.n_columns} feature "
              f"column(s), cost factor {model.cost_factor:g}\n")
    out.write("templates:\n" + "".join(f"  {t}\n" for t in model.templates))
    labels = [str(lab) for lab in model.labels]
    w = max(map(len, labels))
    cell = max(w, 8)
    out.write("transitions (from \\ to)\n")
    out.write(" " * w + "".join(f" {lab:>{cell}}" for lab in labels) + "\n")
    for lab, row in zip(labels, model._A):
        out.write(f"{lab:>{w}}" + "".join(f" {v:>{cell}.3f}" for v in row) + "\n")
    return 0
