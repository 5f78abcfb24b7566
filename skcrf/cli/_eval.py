"""``skcrf eval``: conlleval's span scores of tagged columns, or word
segmentation scores of two segmented files."""

import re

from ..io._columns import iter_column_blocks
from ..metrics import segmentation_scores, span_precision_recall_fscore
from ._io import UserError, open_inputs, stdout

__all__ = ["cmd_eval"]

#: a label with its probability, as ``skcrf tag -v1 / -v2`` (and crf_test -v) print it
_WITH_PROB = re.compile(r"^(.+)/([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)$")


def cmd_eval(args):
    if args.format == "segmented":
        return _eval_segmented(args)
    gold, pred = [], []
    for name, lines in open_inputs(args.files, args.encoding):
        for tokens, _, _ in iter_column_blocks(_tagged_lines(lines, name), name,
                                               labelled=False):
            if len(tokens[0][0]) < 2:
                raise UserError(f"{name}: eval needs the gold and the predicted label as "
                                "the last two columns (skcrf tag's output on labelled "
                                "data, with -v1 / -v2 or without).")
            gold += [[t[-2] for t in seq] for seq in tokens]
            pred += [[t[-1] for t in seq] for seq in tokens]
    if not gold:
        raise UserError(f"{', '.join(args.files) or '<stdin>'}: no tagged sequences.")
    try:
        per = span_precision_recall_fscore(gold, pred, args.scheme, average=None)
        p, r, f = span_precision_recall_fscore(gold, pred, args.scheme)
    except ValueError as exc:
        raise UserError(f"{exc} (use --scheme to name the tag scheme)") from None
    out = stdout()
    n_tok = sum(map(len, gold))
    acc = sum(a == b for g, q in zip(gold, pred) for a, b in zip(g, q)) / max(n_tok, 1)
    n_gold = sum(v[3] for v in per.values())
    out.write(f"processed {n_tok} tokens with {n_gold} phrases; "
              f"accuracy: {100 * acc:6.2f}%; precision: {100 * p:6.2f}%; "
              f"recall: {100 * r:6.2f}%; FB1: {100 * f:6.2f}\n")
    for typ, (tp, tr, tf, n) in per.items():
        out.write(f"{typ or '(chunk)':>17}: precision: {100 * tp:6.2f}%; recall: "
                  f"{100 * tr:6.2f}%; FB1: {100 * tf:6.2f}  {n}\n")
    return 0


def _tagged_lines(lines, name):
    """The lines of ``skcrf tag`` output reduced to ``... gold predicted``:
    the ``# p`` line before each sequence of ``-v1`` / ``-v2`` output is
    dropped and the probabilities after the labels are cut off (``-v2``'s
    columns of every label's probability too). ``-n`` output, several
    predictions per sequence, is refused."""
    verbose = False
    for lineno, line in enumerate(lines, 1):
        if line.startswith("# "):
            if len(line.split()) > 2:
                raise UserError(f"{name}:{lineno}: n-best output (skcrf tag -n): eval "
                                "needs one prediction per sequence.")
            verbose = True
            continue
        if verbose and line.strip():
            cols = line.split()
            k = len(cols)
            while k > 0 and _WITH_PROB.match(cols[k - 1]):
                k -= 1
            if k == len(cols):
                raise UserError(f"{name}:{lineno}: a line of -v output without a "
                                "label/probability column.")
            # cols[k] is the predicted label with its probability; -v2 adds
            # every label's probability after it
            line = " ".join(cols[:k] + [_WITH_PROB.match(cols[k]).group(1)]) + "\n"
        yield line


def _eval_segmented(args):
    if len(args.files) != 2:
        raise UserError("eval --format segmented takes two files: GOLD PRED.")
    gold = [ln.split() for _, lines in open_inputs([args.files[0]], args.encoding)
            for ln in lines if ln.strip()]
    pred = [ln.split() for _, lines in open_inputs([args.files[1]], args.encoding)
            for ln in lines if ln.strip()]
    train = None
    if args.train:
        train = {w for _, lines in open_inputs([args.train], args.encoding)
                 for ln in lines for w in ln.split()}
    try:
        s = segmentation_scores(gold, pred, train_words=train)
    except (ValueError, TypeError) as exc:
        raise UserError(f"{args.files[1]}: {exc}") from None
    out = stdout()
    out.write(f"words: gold {s['n_gold']}, predicted {s['n_pred']}, correct "
              f"{s['n_correct']}\n")
    out.write(f"precision {s['precision']:.4f}  recall {s['recall']:.4f}  "
              f"F1 {s['f1']:.4f}\n")
    if train is not None:
        out.write(f"OOV rate {s['oov_rate']:.4f}  OOV recall {s['oov_recall']:.4f}  "
                  f"IV recall {s['iv_recall']:.4f}\n")
    return 0
