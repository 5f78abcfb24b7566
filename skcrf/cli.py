"""The ``skcrf`` command line (also ``python -m skcrf``): CRF++-style files in and out.

    skcrf train -t TEMPLATE -m MODEL [options] FILE...   train on column data
    skcrf train --format segmented -m MODEL FILE...      train a word segmenter
    skcrf tag -m MODEL [-v1|-v2] [-n N] [FILE...]        label column data (stdin if none)
    skcrf segment -m MODEL [FILE...]                     raw text -> space-separated words
    skcrf eval [--scheme BIO] FILE...                    gold + predicted columns -> spans
    skcrf eval --format segmented GOLD PRED [--train F]  word segmentation scores
    skcrf dump -m MODEL [-k N]                           transitions and top features
    skcrf demo                                           train and score on the bundled sample

Errors in user input (files, templates, options) end with exit status 2 and
one line on stderr naming the file and line; no traceback. Tagging and
segmenting stream their input in blocks and need neither SciPy nor
scikit-learn, so they start fast.
"""

import argparse
import contextlib
import os
import sys
import time

__all__ = ["main"]


class UserError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


def _err(msg):
    raise UserError(msg)


def _open_inputs(paths):
    """Yield ``(name, file)`` for each path (``-`` or none: standard input)."""
    if not paths:
        yield "<stdin>", sys.stdin
        return
    for path in paths:
        if path == "-":
            yield "<stdin>", sys.stdin
            continue
        try:
            fh = open(path, encoding="utf-8-sig")    # a byte-order mark is not text
        except OSError as exc:
            _err(f"{path}: cannot read ({exc.strerror}).")
        with fh:
            yield path, fh


def _progress(msg):
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ train
def _read_training(paths, fmt):
    from ._crfpp import iter_column_blocks

    X, y, t0 = [], [], time.perf_counter()
    for name, fh in _open_inputs(paths):
        if fmt == "segmented":
            for lineno, line in enumerate(fh, 1):
                words = line.split()
                if words:
                    y.append(words)
                    X.append("".join(words))
        else:
            for tokens, labels, _ in iter_column_blocks(fh, name, labelled=True):
                X += tokens
                y += labels
                _progress(f"reading {name}: {len(X):,} sequences "
                          f"({time.perf_counter() - t0:.1f} s)")
    if not X:
        _err(f"{', '.join(paths) or '<stdin>'}: no training sequences.")
    n_tok = sum(map(len, X))
    _progress(f"read {len(X):,} sequences, {n_tok:,} tokens "
              f"({time.perf_counter() - t0:.1f} s)")
    return X, y


def _c2(args):
    if args.c2 is not None:
        return args.c2
    if args.C is None:              # CRF++'s default C = 1; WordSegmenter's own c2
        return 0.3 if args.format == "segmented" else 0.5
    if args.C <= 0:
        _err(f"-c {args.C}: the regularisation parameter must be > 0.")
    return 1.0 / (2.0 * args.C)    # CRF++: sum of losses + ||w||^2 / (2 C)


def cmd_train(args):
    from ._model_io import save_model

    c2 = _c2(args)
    X, y = _read_training(args.files, args.format)
    dev = None
    if args.dev:
        dev = _read_training([args.dev], args.format)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):     # per-iteration lines on stderr
        if args.format == "segmented":
            from ._segmenter import WordSegmenter

            unlabeled = None
            if args.unlabeled:
                unlabeled = [ln.strip() for _, fh in _open_inputs([args.unlabeled])
                             for ln in fh if ln.strip()]
            model = WordSegmenter(c2=c2, max_iter=args.max_iter, tol=args.tol,
                                  n_jobs=args.threads, verbose=1, unlabeled_text=unlabeled)
            _progress("featurizing and training (one line per iteration)...")
            model.fit(X, y)
            crf = model.crf_
            if model.oov_crf_ is not None:
                _progress(f"OOV model (character features only, for new words): "
                          f"{model.oov_crf_.n_iter_} iterations "
                          f"({model.oov_crf_.stop_reason_})")
            if dev is not None:
                _progress(f"held-out word F1: {model.score(*dev):.4f}")
        else:
            model = _train_tagger(args, X, y, dev, c2)
            crf = model[-1]
    _progress(f"trained in {time.perf_counter() - t0:.1f} s: {crf.n_iter_} iterations "
              f"({crf.stop_reason_}), objective {crf.objective_:.4f}, "
              f"{crf.n_nonzero_:,} non-zero weights")
    save_model(model, args.model)
    _progress(f"wrote {args.model} ({os.path.getsize(args.model):,} bytes)")
    return 0


def _train_tagger(args, X, y, dev, c2):
    from sklearn.pipeline import make_pipeline

    from ._crf import LinearChainCRF
    from ._crfpp import PRESETS
    from ._featurizer import SequenceFeaturizer

    if args.template == "ner":
        feat = SequenceFeaturizer(min_freq=args.min_freq)
    else:
        template = PRESETS.get(args.template, args.template)
        if template is args.template and not os.path.isfile(args.template):
            _err(f"-t {args.template}: no such template file, and not a preset "
                 f"({', '.join(['ner'] + sorted(PRESETS))}).")
        feat = SequenceFeaturizer(template=template, min_freq=args.min_freq)
    t0 = time.perf_counter()
    Xs = feat.fit_transform(X)
    _progress(f"featurized: {feat.n_features_out_:,} features, {Xs.nnz:,} non-zeros "
              f"({time.perf_counter() - t0:.1f} s)")
    # CRF++'s model: a weight for every (feature, label), transitions, no start / end
    crf = LinearChainCRF(c1=args.c1, c2=c2, max_iter=args.max_iter, tol=args.tol,
                         n_jobs=args.threads, verbose=1, constraints=args.constraints,
                         all_possible_states=args.template != "ner",
                         start_end_transitions=args.template == "ner")
    held_out = None
    if dev is not None:
        held_out = (feat.transform(dev[0]), dev[1])
    crf._fit(Xs, y, held_out=held_out, scoring=_dev_scoring(y))
    return make_pipeline(feat, crf)


def _dev_scoring(y):
    """Span F1 for BIO-like labels, else token accuracy."""
    labels = {lab for seq in y[:2000] for lab in seq}
    if labels and all(lab == "O" or lab[:2] in ("B-", "I-") for lab in labels):
        from .metrics import make_span_f1_scorer

        return make_span_f1_scorer("BIO")
    return None


# -------------------------------------------------------------------- tag
def cmd_tag(args):
    from ._crfpp import iter_column_blocks
    from ._model_io import read_model

    model = read_model(args.model)
    if model.kind != "tagger":
        _err(f"{args.model}: a word segmenter; use 'skcrf segment'.")
    out = sys.stdout
    for name, fh in _open_inputs(args.files):
        for tokens, _, raw in iter_column_blocks(fh, name, labelled=False,
                                                 block_size=args.block):
            n_in = len(tokens[0][0])
            if n_in not in (model.n_columns, model.n_columns + 1):
                _err(f"{name}: {n_in} columns per line; the model was trained on "
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
    for lines, (labels, lp, P) in zip(raw, model.predict_with_probabilities(feats,
                                                                             args.threads)):
        out.write(f"# {_prob(lp)}\n")
        index = {lab: j for j, lab in enumerate(model.labels)}
        for line, lab, p in zip(lines, labels, P):
            s = f"{_cols(line)}\t{lab}/{p[index[lab]]:.6f}"
            if args.verbose >= 2:
                s += "".join(f"\t{m}/{q:.6f}" for m, q in zip(model.labels, p))
            out.write(s + "\n")
        out.write("\n")


def _cols(line):
    return "\t".join(line.split())


def _prob(log_p):
    import math

    return f"{math.exp(log_p):.6f}"


# ---------------------------------------------------------------- segment
def cmd_segment(args):
    from ._model_io import read_model

    model = read_model(args.model)
    if model.kind != "segmenter":
        _err(f"{args.model}: not a word segmenter (train one with --format segmented).")
    out = sys.stdout
    for _, fh in _open_inputs(args.files):
        block = []
        for line in fh:
            block.append(line.rstrip("\n"))
            if len(block) >= args.block:
                _write_segmented(out, model, block, args.threads)
                block = []
        if block:
            _write_segmented(out, model, block, args.threads)
    return 0


def _write_segmented(out, model, lines, threads):
    for words in model.segment(lines, threads):
        out.write("  ".join(words) + "\n")


# ------------------------------------------------------------------- eval
def cmd_eval(args):
    if args.format == "segmented":
        return _eval_segmented(args)
    from ._crfpp import iter_column_blocks
    from .metrics import span_precision_recall_fscore

    gold, pred = [], []
    for name, fh in _open_inputs(args.files):
        for tokens, _, _ in iter_column_blocks(fh, name, labelled=False):
            if len(tokens[0][0]) < 2:
                _err(f"{name}: eval needs the gold and the predicted label as the last "
                     "two columns (skcrf tag's output on labelled data).")
            gold += [[t[-2] for t in seq] for seq in tokens]
            pred += [[t[-1] for t in seq] for seq in tokens]
    try:
        per = span_precision_recall_fscore(gold, pred, args.scheme, average=None)
        p, r, f = span_precision_recall_fscore(gold, pred, args.scheme)
    except ValueError as exc:
        _err(f"{exc} (use --scheme to name the tag scheme)")
    n_tok = sum(map(len, gold))
    acc = sum(a == b for g, q in zip(gold, pred) for a, b in zip(g, q)) / max(n_tok, 1)
    n_gold = sum(v[3] for v in per.values())
    print(f"processed {n_tok} tokens with {n_gold} phrases; "
          f"accuracy: {100 * acc:6.2f}%; precision: {100 * p:6.2f}%; "
          f"recall: {100 * r:6.2f}%; FB1: {100 * f:6.2f}")
    for typ, (tp, tr, tf, n) in per.items():
        print(f"{typ or '(chunk)':>17}: precision: {100 * tp:6.2f}%; recall: {100 * tr:6.2f}%; "
              f"FB1: {100 * tf:6.2f}  {n}")
    return 0


def _eval_segmented(args):
    from .metrics import segmentation_scores

    if len(args.files) != 2:
        _err("eval --format segmented takes two files: GOLD PRED.")
    gold = [ln.split() for _, fh in _open_inputs([args.files[0]]) for ln in fh if ln.strip()]
    pred = [ln.split() for _, fh in _open_inputs([args.files[1]]) for ln in fh if ln.strip()]
    train = None
    if args.train:
        train = {w for _, fh in _open_inputs([args.train]) for ln in fh for w in ln.split()}
    try:
        s = segmentation_scores(gold, pred, train_words=train)
    except (ValueError, TypeError) as exc:
        _err(f"{args.files[1]}: {exc}")
    print(f"words: gold {s['n_gold']}, predicted {s['n_pred']}, correct {s['n_correct']}")
    print(f"precision {s['precision']:.4f}  recall {s['recall']:.4f}  F1 {s['f1']:.4f}")
    if train is not None:
        print(f"OOV rate {s['oov_rate']:.4f}  OOV recall {s['oov_recall']:.4f}  "
              f"IV recall {s['iv_recall']:.4f}")
    return 0


# ------------------------------------------------------------------- dump
def cmd_dump(args):
    import numpy as np

    from ._model_io import read_model

    model = read_model(args.model)
    labels = [str(lab) for lab in model.labels]
    w = max(map(len, labels + ["<start>"]))
    print("transitions (from \\ to)" + ("" if model.weights.start.any() else "; no start/end"))
    print(" " * w + "".join(f" {lab:>{max(w, 8)}}" for lab in labels))
    for lab, row in zip(labels, model.weights.A):
        print(f"{lab:>{w}}" + "".join(f" {v:>{max(w, 8)}.3f}" for v in row))
    if model.weights.start.any() or model.weights.end.any():
        print(f"{'<start>':>{w}}" + "".join(f" {v:>{max(w, 8)}.3f}" for v in model.weights.start))
        print(f"{'<end>':>{w}}" + "".join(f" {v:>{max(w, 8)}.3f}" for v in model.weights.end))
    names = model.feature_names()
    W = model.weights.W
    for j, lab in enumerate(labels):
        order = np.argsort(-W[:, j], kind="stable")[:args.top]
        print(f"\ntop {args.top} state features of {lab}:")
        for i in order:
            if W[i, j] > 0:
                print(f"  {W[i, j]:9.4f}  {names[i]}")
    if getattr(model, "oov", None) is not None:
        print(f"\nOOV model (character features only; not shown): {model.oov.n_features:,} "
              f"features; {len(model.known_words):,} known words never proposed as new")
    return 0


# ------------------------------------------------------------------- main
def _parser():
    ap = argparse.ArgumentParser(prog="skcrf", description="skcrf: linear-chain CRFs "
                                 "(CRF++-style files, scikit-learn inside).")
    sub = ap.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a model on CRF++ column data or segmented text")
    t.add_argument("files", nargs="+", metavar="FILE")
    t.add_argument("-t", "--template", default="ner",
                   help="CRF++ template file, or a preset: ner (the featurizer's token "
                        "features: words, neighbours, shapes; all columns), chunk, cws "
                        "(default ner)")
    t.add_argument("-m", "--model", required=True, help="model file to write")
    t.add_argument("-c", dest="C", type=float, default=None,
                   help="CRF++'s C (larger fits the data more closely): c2 = 1 / (2 C) "
                        "(default 1: c2 = 0.5; with --format segmented, "
                        "WordSegmenter's c2 = 0.3)")
    t.add_argument("--c2", type=float, default=None, help="L2 strength, instead of -c")
    t.add_argument("--c1", type=float, default=0.0, help="L1 strength (default 0)")
    t.add_argument("-f", "--min-freq", type=int, default=1,
                   help="drop features seen fewer times (default 1)")
    t.add_argument("-p", "--threads", type=int, default=1, help="threads (default 1)")
    t.add_argument("--max-iter", type=int, default=1000)
    t.add_argument("--tol", type=float, default=1e-5)
    t.add_argument("--constraints", default=None,
                   help="tag scheme to enforce: BIO, BIOES, BIOUL, BMES, BB2B3MES")
    t.add_argument("--dev", default=None, help="held-out file scored while training")
    t.add_argument("--format", choices=("columns", "segmented"), default="columns",
                   help="columns: CRF++ data; segmented: one sentence a line, words "
                        "separated by spaces (trains a word segmenter)")
    t.add_argument("--unlabeled", default=None,
                   help="segmented format: raw text for the accessor-variety statistics")
    t.set_defaults(func=cmd_train)

    g = sub.add_parser("tag", help="label column data, CRF++ crf_test's output")
    g.add_argument("files", nargs="*", metavar="FILE")
    g.add_argument("-m", "--model", required=True)
    g.add_argument("-v", "--verbose", type=int, default=0, choices=(0, 1, 2),
                   help="-v1: sequence and label probabilities; -v2: all labels'")
    g.add_argument("-n", "--nbest", type=int, default=0, help="the N best sequences")
    g.add_argument("-p", "--threads", type=int, default=1)
    g.add_argument("--block", type=int, default=1000, help="sequences per block")
    g.set_defaults(func=cmd_tag)

    s = sub.add_parser("segment", help="segment raw text (one sentence a line)")
    s.add_argument("files", nargs="*", metavar="FILE")
    s.add_argument("-m", "--model", required=True)
    s.add_argument("-p", "--threads", type=int, default=1)
    s.add_argument("--block", type=int, default=2000, help="lines per block")
    s.set_defaults(func=cmd_segment)

    e = sub.add_parser("eval", help="score predictions")
    e.add_argument("files", nargs="*", metavar="FILE")
    e.add_argument("--scheme", default="BIO", help="tag scheme of the column labels")
    e.add_argument("--format", choices=("columns", "segmented"), default="columns")
    e.add_argument("--train", default=None, help="segmented: training text (for OOV)")
    e.set_defaults(func=cmd_eval)

    d = sub.add_parser("dump", help="print transitions and top features of a model")
    d.add_argument("-m", "--model", required=True)
    d.add_argument("-k", "--top", type=int, default=20)
    d.set_defaults(func=cmd_dump)

    m = sub.add_parser("demo", help="train a word segmenter on the bundled sample and "
                                    "score it on a held-out part")
    m.add_argument("--n-jobs", type=int, default=None, help="threads (default 1)")
    m.add_argument("sentences", nargs="*", help="sentences to segment after training")
    m.set_defaults(func=cmd_demo)
    return ap


def cmd_demo(args):
    from .datasets import load_sample_cws
    from ._segmenter import WordSegmenter
    from .metrics import segmentation_scores

    sents = load_sample_cws()
    n_test = max(1, len(sents) // 10)
    train, test = sents[:-n_test], sents[-n_test:]
    X = ["".join(s) for s in train]
    print(f"Bundled sample (UD Chinese GSD, CC BY-SA 4.0): {len(train)} training "
          f"sentences ({sum(map(len, X)):,} characters), {len(test)} held out.")
    t = time.perf_counter()
    seg = WordSegmenter(n_jobs=args.n_jobs).fit(X, train)
    oov = (f"; its OOV model {seg.oov_crf_.n_iter_} iterations, "
           f"{seg.oov_featurizer_.n_features_out_:,} features" if seg.oov_crf_ else "")
    print(f"Trained WordSegmenter() in {time.perf_counter() - t:.1f} s "
          f"({seg.crf_.n_iter_} L-BFGS iterations, {seg.featurizer_.n_features_out_:,} "
          f"features{oov}; the first run also compiles the kernels).")
    pred = seg.predict(["".join(s) for s in test])
    s = segmentation_scores(test, pred, train_words=seg.train_words_)
    print(f"Held-out words: precision {s['precision']:.4f}  recall {s['recall']:.4f}  "
          f"F1 {s['f1']:.4f}  OOV rate {s['oov_rate']:.3f}  OOV recall "
          f"{s['oov_recall']:.4f}  IV recall {s['iv_recall']:.4f}")
    examples = args.sentences or ["上海市体育局召开体育宣传工作会议",
                                  "我们在北京大学学习自然语言处理，2008年买了iPhone手机。"]
    for text, words in zip(examples, seg.predict(examples)):
        print(f"  {text}  ->  {' / '.join(words)}")
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except UserError as exc:
        print(f"skcrf {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except (ValueError, TypeError, OSError) as exc:
        # bad input found deeper down (a data line, a template, a model file)
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"skcrf {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
