"""The command line's options: each with its help, its default and a check of
its value (a bad value is one line on stderr and exit status 2)."""

import argparse
import math
import sys

from .._version import __version__
from ._io import DEFAULT_ENCODING

__all__ = ["parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, with errors in one line (no usage block): ``skcrf train:
    error: argument --c2: ...``, exit status 2."""

    def error(self, message):
        if sys.stderr is not None:
            print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


class _Help(argparse.RawDescriptionHelpFormatter):
    """Examples kept as written; every option's default shown (when it has one)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default is not None and action.default is not False \
                and action.default != argparse.SUPPRESS and action.option_strings \
                and "%(default)" not in text:
            text += " (default: %(default)s)"
        return text


# ------------------------------------------------------------ value checks
def _int_at_least(low, allow=()):
    def check(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < low and v not in allow:
            extra = "" if not allow else " (or " + ", ".join(map(str, allow)) + ")"
            raise argparse.ArgumentTypeError(f"{v} must be at least {low}{extra}")
        return v
    return check


def _float_at_least(low, strict=False):
    def check(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(v) or v < low or (strict and v == low):
            raise argparse.ArgumentTypeError(
                f"{text} must be a finite number {'>' if strict else '>='} {low}")
        return v
    return check


_THREADS = _int_at_least(1, allow=(-1,))


def _common(p, threads=True, encoding=True):
    if threads:
        p.add_argument("-p", "--threads", type=_THREADS, default=1,
                       help="kernel threads (-1: all cores)")
    if encoding:
        p.add_argument("--encoding", default=DEFAULT_ENCODING,
                       help="encoding of the input files (UTF-8 with or without a "
                            "byte-order mark by default; e.g. gbk, utf-16)")


def parser():
    ap = _Parser(prog="skcrf", formatter_class=_Help,
                 description="skcrf: linear-chain CRFs with CRF++-style files "
                             "(scikit-learn inside).",
                 epilog="Run 'skcrf COMMAND -h' for a command's options and examples.")
    ap.add_argument("--version", action="version", version=f"skcrf {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _train(sub)
    _tag(sub)
    _segment(sub)
    _eval(sub)
    _dump(sub)
    _demo(sub)
    _compile(sub)
    return ap


def _add(sub, name, help, examples):
    return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                          formatter_class=_Help, epilog="examples:\n" + examples)


def _train(sub):
    t = _add(sub, "train", "train a model on CRF++ column data or segmented text", """\
  skcrf train -t template -m ner.model train.txt
  skcrf train -t ner -m ner.model --dev testa.txt -p 2 train.txt
  skcrf train --format segmented -m cws.model train_segmented.txt""")
    t.add_argument("files", nargs="+", metavar="FILE",
                   help="training files: CRF++ columns (features..., label; a blank line "
                        "between sequences), or with --format segmented one sentence a "
                        "line, words separated by spaces")
    t.add_argument("-t", "--template", default="ner",
                   help="a CRF++ template file, or a preset: ner (the featurizer's token "
                        "features: words, neighbours, shapes; all columns), chunk, cws")
    t.add_argument("-m", "--model", required=True, help="the model file to write")
    t.add_argument("-c", dest="C", type=_float_at_least(0, strict=True), default=None,
                   help="CRF++'s C (larger fits the training data more closely): "
                        "c2 = 1 / (2 C); unset: C = 1, i.e. c2 = 0.5 (with --format "
                        "segmented, WordSegmenter's c2 = 0.3)")
    t.add_argument("--c2", type=_float_at_least(0), default=None,
                   help="L2 strength, instead of -c")
    t.add_argument("--c1", type=_float_at_least(0), default=0.0, help="L1 strength")
    t.add_argument("-f", "--min-freq", type=_int_at_least(1), default=1,
                   help="drop features seen fewer times in training")
    t.add_argument("--max-iter", type=_int_at_least(1), default=1000,
                   help="most L-BFGS iterations")
    t.add_argument("--tol", type=_float_at_least(0), default=1e-5,
                   help="stop when the objective improved by less than this (relative) "
                        "over the last 10 iterations")
    t.add_argument("--constraints", default=None,
                   help="tag scheme to enforce: BIO, BIOES, BIOUL, BMES, BB2B3MES")
    t.add_argument("--dev", default=None,
                   help="held-out file, scored after every iteration (report only)")
    t.add_argument("--format", choices=("columns", "segmented"), default="columns",
                   help="columns: CRF++ data; segmented: one sentence a line, words "
                        "separated by spaces (trains a word segmenter)")
    t.add_argument("--unlabeled", default=None,
                   help="segmented format: raw text for the accessor-variety statistics "
                        "(e.g. the text you will segment)")
    _common(t)


def _tag(sub):
    g = _add(sub, "tag", "label column data, in CRF++ crf_test's output layout", """\
  skcrf tag -m ner.model test.txt > tagged.txt
  skcrf tag -m ner.model -v1 test.txt        # sequence and label probabilities
  skcrf tag -m ner.model -n 3 < test.txt     # the 3 best label sequences
  skcrf tag -m crfsuite.model test.crfsuite.txt   # a CRFsuite model, CRFsuite's data format""")
    g.add_argument("files", nargs="*", metavar="FILE",
                   help="CRF++ column files (standard input if none); a last column "
                        "beyond the model's features (a gold label) is kept. With a "
                        "CRFsuite model: CRFsuite's data format (label, then attributes, "
                        "tab-separated)")
    g.add_argument("-m", "--model", required=True, help="the model file to read")
    g.add_argument("-v", "--verbose", type=int, default=0, choices=(0, 1, 2),
                   help="-v1: the sequence's and each label's probability; -v2: every "
                        "label's probability")
    g.add_argument("-n", "--nbest", type=_int_at_least(0), default=0,
                   help="print the N most probable label sequences (0: the best only)")
    g.add_argument("--block", type=_int_at_least(1), default=1000,
                   help="sequences read and tagged at a time")
    _common(g)


def _segment(sub):
    s = _add(sub, "segment", "segment raw text (one sentence a line) into words", """\
  skcrf segment -m cws.model raw.txt > segmented.txt
  echo 上海浦东开发与法制建设同步 | skcrf segment -m cws.model""")
    s.add_argument("files", nargs="*", metavar="FILE",
                   help="raw text files, one sentence a line (standard input if none)")
    s.add_argument("-m", "--model", required=True,
                   help="a word segmenter model file (skcrf train --format segmented)")
    s.add_argument("--block", type=_int_at_least(1), default=2000,
                   help="lines read and segmented at a time")
    _common(s)


def _eval(sub):
    e = _add(sub, "eval", "score predictions (conlleval's spans, or words)", """\
  skcrf tag -m ner.model test.txt | skcrf eval
  skcrf eval --scheme BIOES tagged.txt
  skcrf eval --format segmented gold.txt predicted.txt --train train.txt""")
    e.add_argument("files", nargs="*", metavar="FILE",
                   help="columns: skcrf tag's output on labelled data (gold and predicted "
                        "label as the last two columns; -v1 / -v2 output too); "
                        "segmented: GOLD PRED")
    e.add_argument("--scheme", default="BIO",
                   help="tag scheme of the column labels (BIO, BIOES, BIOUL, BMES, ...)")
    e.add_argument("--format", choices=("columns", "segmented"), default="columns",
                   help="columns: tagged column data; segmented: two files of words "
                        "separated by spaces")
    e.add_argument("--train", default=None,
                   help="segmented: the training text, for OOV recall")
    _common(e, threads=False)


def _dump(sub):
    d = _add(sub, "dump", "print a model's transitions and strongest features", """\
  skcrf dump -m ner.model
  skcrf dump -m ner.model -k 50""")
    d.add_argument("-m", "--model", required=True, help="the model file to read")
    d.add_argument("-k", "--top", type=_int_at_least(0), default=20,
                   help="strongest state features printed per label")


def _demo(sub):
    m = _add(sub, "demo", "train a word segmenter on the bundled sample and score it", """\
  skcrf demo
  skcrf demo 我们在北京大学学习自然语言处理""")
    m.add_argument("--n-jobs", type=_THREADS, default=1,
                   help="kernel threads (-1: all cores)")
    m.add_argument("sentences", nargs="*", help="sentences to segment after training")


def _compile(sub):
    c = _add(sub, "compile", "compile the Numba kernels now (for container images and "
             "workers: later processes load them from the cache)", """\
  NUMBA_CACHE_DIR=/opt/skcrf-cache skcrf compile""")
    c.add_argument("--no-segmenter", action="store_true",
                   help="skip the word-segmentation featurisation kernels")
