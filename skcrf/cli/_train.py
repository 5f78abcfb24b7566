"""``skcrf train``: CRF++ column data or segmented text in, a model file out.

Every option is checked by the estimator's own parameter validation, and the
model file's directory for writing, before any data is read or any training
is done: a bad option never costs a training run.
"""

import contextlib
import os
import re
import sys
import tempfile
import time

from sklearn.pipeline import make_pipeline

from .._crf import LinearChainCRF
from .._sklearn_compat import InvalidParameterError
from ..feature_extraction._crfpp import PRESETS
from ..feature_extraction._featurizer import SequenceFeaturizer
from ..io._columns import iter_column_blocks
from ..io._estimators import save_model
from ..metrics import make_span_f1_scorer
from ..segmentation._segmenter import WordSegmenter
from ._io import Interrupted, UserError, open_inputs, progress

__all__ = ["cmd_train"]

#: options of column training that a word segmenter does not take
_COLUMN_ONLY = {"c1": 0.0, "min_freq": 1, "constraints": None, "template": "ner"}


def cmd_train(args):
    c2 = _c2(args)
    model = _estimator(args, c2)
    _check_writable(args.model)
    X, y = read_training(args.files, args.format, args.encoding)
    dev = read_training([args.dev], args.format, args.encoding) if args.dev else None
    t0 = time.perf_counter()
    counter = _IterationCounter(sys.stderr)
    try:
        with contextlib.redirect_stdout(counter):      # per-iteration lines on stderr
            model = _fit(args, model, X, y, dev)
    except (KeyboardInterrupt, Interrupted) as exc:
        status = exc.status if isinstance(exc, Interrupted) else 130
        what = "terminated" if status == 143 else "interrupted"
        where = f" at iteration {counter.last}" if counter.last else ""
        raise Interrupted(f"{what}{where}; no model written.", status) from None
    crf = model.crf_ if isinstance(model, WordSegmenter) else model[-1]
    progress(f"trained in {time.perf_counter() - t0:.1f} s: {crf.n_iter_} iterations "
             f"({crf.stop_reason_}), objective {crf.objective_:.4f}, "
             f"{crf.n_nonzero_:,} non-zero weights")
    save_model(model, args.model)
    progress(f"wrote {args.model} ({os.path.getsize(args.model):,} bytes)")
    return 0


def _c2(args):
    if args.c2 is not None:
        if args.C is not None:
            raise UserError("give -c or --c2, not both.")
        return args.c2
    if args.C is None:              # CRF++'s default C = 1; WordSegmenter's own c2
        return 0.3 if args.format == "segmented" else 0.5
    return 1.0 / (2.0 * args.C)    # CRF++: sum of losses + ||w||^2 / (2 C)


def _estimator(args, c2):
    """The (unfitted) model the options describe, its parameters checked."""
    if args.format == "segmented":
        for name, default in _COLUMN_ONLY.items():
            if getattr(args, name) != default:
                raise UserError(f"--{name.replace('_', '-')} does not apply to "
                                "--format segmented (a WordSegmenter).")
        model = WordSegmenter(c2=c2, max_iter=args.max_iter, tol=args.tol,
                              n_jobs=args.threads, verbose=1)
        return _validated(model)
    if args.unlabeled:
        raise UserError("--unlabeled applies to --format segmented only.")
    if args.template == "ner":
        feat = SequenceFeaturizer(min_freq=args.min_freq)
    else:
        template = PRESETS.get(args.template, args.template)
        if template is args.template and not os.path.isfile(args.template):
            raise UserError(f"-t {args.template}: no such template file, and not a "
                            f"preset ({', '.join(['ner'] + sorted(PRESETS))}).")
        feat = SequenceFeaturizer(template=template, min_freq=args.min_freq)
    # CRF++'s model: a weight for every (feature, label), transitions, no start / end
    crf = LinearChainCRF(c1=args.c1, c2=c2, max_iter=args.max_iter, tol=args.tol,
                         n_jobs=args.threads, verbose=1, constraints=args.constraints,
                         all_possible_states=args.template != "ner",
                         start_end_transitions=args.template == "ner")
    return make_pipeline(_validated(feat), _validated(crf))


def _validated(est):
    """``est`` with its parameters checked by its own constraints; a bad one
    is a UserError naming the option."""
    try:
        est._validate_params()
    except InvalidParameterError as exc:
        msg = re.sub(r"^The '(\w+)' parameter of \w+ ",
                     lambda m: f"--{m.group(1).replace('_', '-')} ", str(exc))
        raise UserError(msg) from None
    return est


def _check_writable(path):
    """Fail now, not after training, if ``path`` cannot be written."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise UserError(f"-m {path}: a directory, not a file.")
    if not os.path.isdir(directory):
        raise UserError(f"-m {path}: no such directory {directory}.")
    try:
        fd, probe = tempfile.mkstemp(prefix=".skcrf-", suffix=".tmp", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"-m {path}: cannot write in {directory} "
                        f"({exc.strerror or exc}).") from None


def read_training(paths, fmt, encoding):
    """``(X, y)`` of training files: CRF++ columns or segmented text."""
    X, y, t0 = [], [], time.perf_counter()
    for name, lines in open_inputs(paths, encoding):
        if fmt == "segmented":
            for line in lines:
                words = line.split()
                if words:
                    y.append(words)
                    X.append("".join(words))
        else:
            for tokens, labels, _ in iter_column_blocks(lines, name, labelled=True):
                X += tokens
                y += labels
                progress(f"reading {name}: {len(X):,} sequences "
                         f"({time.perf_counter() - t0:.1f} s)")
    if not X:
        raise UserError(f"{', '.join(paths) or '<stdin>'}: no training sequences.")
    n_tok = sum(map(len, X))
    progress(f"read {len(X):,} sequences, {n_tok:,} tokens "
             f"({time.perf_counter() - t0:.1f} s)")
    return X, y


def _fit(args, model, X, y, dev):
    if isinstance(model, WordSegmenter):
        if args.unlabeled:
            model.set_params(unlabeled_text=[
                ln.strip() for _, lines in open_inputs([args.unlabeled], args.encoding)
                for ln in lines if ln.strip()])
        progress("featurizing and training (one line per iteration)...")
        model.fit(X, y)
        if model.oov_crf_ is not None:
            progress(f"OOV model (character features only, for new words): "
                     f"{model.oov_crf_.n_iter_} iterations ({model.oov_crf_.stop_reason_})")
        if dev is not None:
            progress(f"held-out word F1: {model.score(*dev):.4f}")
        return model
    feat, crf = model[0], model[-1]
    t0 = time.perf_counter()
    Xs = feat.fit_transform(X)
    progress(f"featurized: {feat.n_features_out_:,} features, {Xs.nnz:,} non-zeros "
             f"({time.perf_counter() - t0:.1f} s)")
    held_out = None if dev is None else (feat.transform(dev[0]), dev[1])
    # (the parameters were checked above; _fit scores the --dev file after
    # every iteration without stopping on it)
    crf._fit(Xs, y, held_out=held_out, scoring=_dev_scoring(y))
    return model


def _dev_scoring(y):
    """Span F1 for BIO-like labels, else token accuracy."""
    labels = {lab for seq in y[:2000] for lab in seq}
    if labels and all(lab == "O" or lab[:2] in ("B-", "I-") for lab in labels):
        return make_span_f1_scorer("BIO")
    return None


class _IterationCounter:
    """A stream that passes the per-iteration lines on and remembers the last
    iteration number (for the message of an interrupted training)."""

    _ITER = re.compile(r"^iter\s+(\d+)")

    def __init__(self, stream):
        self.stream, self.last = stream, 0

    def write(self, text):
        m = self._ITER.match(text)
        if m:
            self.last = int(m.group(1))
        if self.stream is not None:
            return self.stream.write(text)
        return len(text)

    def flush(self):
        if self.stream is not None:
            self.stream.flush()
