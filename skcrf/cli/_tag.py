"""``skcrf tag`` and ``skcrf segment``: a model file's runtime on input
streamed in blocks. NumPy only (Numba when a block is large enough to pay
for it): a short ``skcrf tag`` starts in a fraction of a second."""

import math

from .._formats import model_format, read_crfpp_file
from ..io._columns import iter_column_blocks
from ..io._model import read_model
from ._io import UserError, open_inputs, stdout

__all__ = ["cmd_tag", "cmd_segment"]


def cmd_tag(args):
    fmt = model_format(args.model)
    if fmt == "crfsuite":
        from ._crfsuite import tag_crfsuite

        return tag_crfsuite(args)
    model = read_crfpp_file(args.model) if fmt == "crfpp" else read_model(args.model)
    if model.kind != "tagger":
        raise UserError(f"{args.model}: a word segmenter; use 'skcrf segment'.")
    out = stdout()
    for name, lines in open_inputs(args.files, args.encoding):
        for tokens, _, raw in iter_column_blocks(lines, name, labelled=False,
                                                 block_size=args.block):
            n_in = len(tokens[0][0])
            if n_in not in (model.n_columns, model.n_columns + 1):
                raise UserError(
                    f"{name}: {n_in} columns per line; the model was trained on "
                    f"{model.n_columns} feature column(s) (plus an optional answer column).")
            feats = [[t[:model.n_columns] for t in seq] for seq in tokens]
            if model.input_kind == "chars":
                feats = ["".join(t[0] for t in seq) for seq in feats]
            _write_tagged(out, model, feats, raw, args)
    return 0


def _write_tagged(out, model, feats, raw, args):
    if args.nbest:
        for lines, best in zip(raw, model.topk(feats, args.nbest, args.threads)):
            for q, (labels, lp) in enumerate(best):
                out.write(f"# {q} {_prob(lp)}\n")
                for line, lab in zip(lines, labels):
                    out.write(f"{_cols(line)}\t{lab}\n")
                out.write("\n")
        return
    if not args.verbose:
        for lines, labels in zip(raw, model.predict(feats, args.threads)):
            for line, lab in zip(lines, labels):
                out.write(f"{_cols(line)}\t{lab}\n")
            out.write("\n")
        return
    index = {lab: j for j, lab in enumerate(model.labels)}
    for lines, (labels, lp, P) in zip(raw, model.predict_with_probabilities(
            feats, args.threads)):
        out.write(f"# {_prob(lp)}\n")
        for line, lab, p in zip(lines, labels, P):
            s = f"{_cols(line)}\t{lab}/{p[index[lab]]:.6f}"
            if args.verbose >= 2:
                s += "".join(f"\t{m}/{q:.6f}" for m, q in zip(model.labels, p))
            out.write(s + "\n")
        out.write("\n")


def _cols(line):
    return "\t".join(line.split())


def _prob(log_p):
    return f"{math.exp(log_p):.6f}"


def cmd_segment(args):
    model = read_model(args.model)
    if model.kind != "segmenter":
        raise UserError(f"{args.model}: not a word segmenter (train one with "
                        "'skcrf train --format segmented').")
    out = stdout()
    for _, lines in open_inputs(args.files, args.encoding):
        block = []
        for line in lines:
            block.append(line.rstrip("\n").rstrip("\r"))
            if len(block) >= args.block:
                _write_segmented(out, model, block, args.threads)
                block = []
        if block:
            _write_segmented(out, model, block, args.threads)
    return 0


def _write_segmented(out, model, lines, threads):
    for words in model.segment(lines, threads):
        out.write("  ".join(words) + "\n")
