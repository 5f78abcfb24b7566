"""Sequence-labelling metrics: token / sequence accuracy, exact-span F1,
word segmentation scores, and scorers for ``scoring=``."""

import numpy as np
from sklearn.metrics import make_scorer

from ._tag_schemes import roles as _scheme_roles
from ._tag_schemes import split_tag as _split_tag

__all__ = [
    "tags_to_spans",
    "token_accuracy",
    "sequence_accuracy",
    "span_precision_recall_fscore",
    "span_f1_score",
    "span_classification_report",
    "segmentation_scores",
    "make_span_f1_scorer",
    "token_accuracy_scorer",
    "sequence_accuracy_scorer",
    "segmentation_f1_scorer",
]


def tags_to_spans(tokens_or_length, tags, scheme="BIO"):
    """Entities of a tag sequence as ``[(type, start, end), ...]``.

    ``end`` is exclusive. Follows conlleval: an entity starts at ``B``/``S``,
    and also at an ``I``/``E`` that follows ``O``, an entity of another type,
    or an ``E``/``S``; it ends before a token that does not continue it. For
    ``BMES`` the type is ``""`` (or the suffix of ``B-NN``-style tags).

    Parameters
    ----------
    tokens_or_length : int or sequence
        The tokens (only their number is used) or the sequence length.
    tags : sequence of str
    scheme : {"BIO", "BIOES", "BIOUL", "BMES"}, default="BIO"

    Examples
    --------
    >>> tags_to_spans(4, ["B-PER", "I-PER", "O", "I-LOC"])
    [('PER', 0, 2), ('LOC', 3, 4)]
    """
    n = tokens_or_length if isinstance(tokens_or_length, (int, np.integer)) \
        else len(tokens_or_length)
    if len(tags) != n:
        raise ValueError(f"{len(tags)} tags for a sequence of length {n}.")
    roles = _scheme_roles(scheme)
    spans = []
    prev_role, prev_type = "O", ""
    start = None
    for t, tag in enumerate(tags):
        role, typ = _split_tag(tag, roles)
        if start is not None and _chunk_ends(prev_role, role, prev_type, typ):
            spans.append((prev_type, start, t))
            start = None
        if _chunk_starts(prev_role, role, prev_type, typ):
            start = t
        prev_role, prev_type = role, typ
    if start is not None:
        spans.append((prev_type, start, n))
    return spans


def _chunk_ends(prev, cur, prev_type, typ):
    if prev in ("E", "S"):
        return True
    if prev in ("B", "I"):
        return cur in ("B", "S", "O") or prev_type != typ
    return False


def _chunk_starts(prev, cur, prev_type, typ):
    if cur in ("B", "S"):
        return True
    if cur in ("I", "E"):
        return prev in ("E", "S", "O") or prev_type != typ
    return False


def _check_pairs(y_true, y_pred):
    if len(y_true) != len(y_pred):
        raise ValueError(
            f"y_true has {len(y_true)} sequences but y_pred has {len(y_pred)}."
        )
    for i, (a, b) in enumerate(zip(y_true, y_pred)):
        if len(a) != len(b):
            raise ValueError(
                f"Sequence {i}: y_true has {len(a)} labels but y_pred has {len(b)}."
            )


def token_accuracy(y_true, y_pred):
    """Fraction of tokens whose predicted label equals the true label."""
    _check_pairs(y_true, y_pred)
    n = sum(len(a) for a in y_true)
    if n == 0:
        return 0.0
    return sum(x == z for a, b in zip(y_true, y_pred) for x, z in zip(a, b)) / n


def sequence_accuracy(y_true, y_pred):
    """Fraction of sequences predicted entirely right."""
    _check_pairs(y_true, y_pred)
    if not len(y_true):
        return 0.0
    return float(np.mean([list(a) == list(b) for a, b in zip(y_true, y_pred)]))


def _span_counts(y_true, y_pred, scheme):
    """Per entity type: (n_true, n_pred, n_correct)."""
    _check_pairs(y_true, y_pred)
    counts = {}
    for a, b in zip(y_true, y_pred):
        ta = set(tags_to_spans(len(a), list(a), scheme))
        tb = set(tags_to_spans(len(b), list(b), scheme))
        for typ, *_ in ta:
            counts.setdefault(typ, [0, 0, 0])[0] += 1
        for typ, *_ in tb:
            counts.setdefault(typ, [0, 0, 0])[1] += 1
        for typ, *_ in ta & tb:
            counts[typ][2] += 1
    return counts


def _prf(n_true, n_pred, n_ok):
    p = n_ok / n_pred if n_pred else 0.0
    r = n_ok / n_true if n_true else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def span_precision_recall_fscore(y_true, y_pred, scheme="BIO", average="micro"):
    """Exact-span precision, recall and F1 (conlleval's definition).

    An entity is right when its type, start and end all match.

    Parameters
    ----------
    y_true, y_pred : list of list of str
    scheme : {"BIO", "BIOES", "BIOUL", "BMES"}, default="BIO"
    average : {"micro", "macro", None}, default="micro"
        ``"micro"`` pools all entities; ``"macro"`` averages the per-type
        scores (types seen in either gold or prediction); ``None`` returns a
        dict ``type -> (precision, recall, f1, support)``.

    Returns
    -------
    (precision, recall, f1) or dict
    """
    counts = _span_counts(y_true, y_pred, scheme)
    if average is None:
        return {t: _prf(*c) + (c[0],) for t, c in sorted(counts.items())}
    if average == "micro":
        tot = np.array(list(counts.values()) or [[0, 0, 0]]).sum(axis=0)
        return _prf(*tot)
    if average == "macro":
        if not counts:
            return 0.0, 0.0, 0.0
        per = np.array([_prf(*c) for c in counts.values()])
        return tuple(float(v) for v in per.mean(axis=0))
    raise ValueError(f"average must be 'micro', 'macro' or None, got {average!r}.")


def span_f1_score(y_true, y_pred, scheme="BIO", average="micro"):
    """Exact-span F1 (micro: conlleval's overall FB1, as a fraction)."""
    return span_precision_recall_fscore(y_true, y_pred, scheme, average)[2]


def span_classification_report(y_true, y_pred, scheme="BIO", digits=4):
    """Text report: per-type precision / recall / F1 / support, micro and macro averages."""
    per = span_precision_recall_fscore(y_true, y_pred, scheme, average=None)
    width = max([len(t) for t in per] + [len("micro avg")])
    head = f"{'':>{width}}  {'precision':>9}  {'recall':>9}  {'f1-score':>9}  {'support':>7}"
    lines = [head, ""]
    fmt = "{:>{w}}  {:>9.{d}f}  {:>9.{d}f}  {:>9.{d}f}  {:>7}"
    for t, (p, r, f, n) in per.items():
        lines.append(fmt.format(t or "(word)", p, r, f, n, w=width, d=digits))
    total = sum(v[3] for v in per.values())
    lines.append("")
    for avg in ("micro", "macro"):
        p, r, f = span_precision_recall_fscore(y_true, y_pred, scheme, average=avg)
        lines.append(fmt.format(f"{avg} avg", p, r, f, total, w=width, d=digits))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------- scorers
def make_span_f1_scorer(scheme="BIO", average="micro"):
    """A scorer for ``scoring=``: exact-span F1 of ``estimator.predict(X)``.

    >>> from sklearn.model_selection import GridSearchCV
    >>> scorer = make_span_f1_scorer("BIO")
    """
    _scheme_roles(scheme)
    return make_scorer(span_f1_score, scheme=scheme, average=average)


def _word_spans(words):
    spans, pos = [], 0
    for w in words:
        spans.append((pos, pos + len(w)))
        pos += len(w)
    return spans


def segmentation_scores(gold_words, pred_words, train_words=None):
    """Word segmentation precision, recall, F1 and OOV / IV recall.

    Defined as the SIGHAN bakeoff scorer does: a predicted word is right when
    its character span equals a gold word's span. With ``train_words``, a
    gold word is out-of-vocabulary (OOV) when it is not among them; OOV recall
    is the fraction of OOV gold words found, IV recall the same for the others.

    Parameters
    ----------
    gold_words, pred_words : list of list of str
        One list of words per sentence; each pair must spell the same text.
    train_words : iterable of str, default=None

    Returns
    -------
    scores : dict
        ``precision``, ``recall``, ``f1`` (and ``oov_rate``, ``oov_recall``,
        ``iv_recall`` with ``train_words``), plus the counts they come from.

    Examples
    --------
    >>> s = segmentation_scores([["上海", "推"]], [["上", "海", "推"]], train_words=["推"])
    >>> s["precision"], s["recall"], s["oov_recall"], s["iv_recall"]
    (0.3333333333333333, 0.5, 0.0, 1.0)
    """
    if len(gold_words) != len(pred_words):
        raise ValueError(
            f"{len(gold_words)} gold sentences but {len(pred_words)} predicted ones."
        )
    vocab = set(train_words) if train_words is not None else None
    n_gold = n_pred = n_ok = 0
    n_oov = n_oov_ok = n_iv = n_iv_ok = 0
    for i, (g, p) in enumerate(zip(gold_words, pred_words)):
        if isinstance(g, str) or isinstance(p, str):
            raise TypeError(f"Sentence {i}: expected a list of words, got a str.")
        if "".join(g) != "".join(p):
            raise ValueError(
                f"Sentence {i}: gold and predicted words spell different text "
                f"({''.join(g)[:20]!r}... vs {''.join(p)[:20]!r}...)."
            )
        gs = _word_spans(g)
        ps = set(_word_spans(p))
        n_gold += len(gs)
        n_pred += len(ps)
        for w, span in zip(g, gs):
            ok = span in ps
            n_ok += ok
            if vocab is not None:
                if w in vocab:
                    n_iv += 1
                    n_iv_ok += ok
                else:
                    n_oov += 1
                    n_oov_ok += ok
    p = n_ok / n_pred if n_pred else 0.0
    r = n_ok / n_gold if n_gold else 0.0
    out = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
           "n_gold": n_gold, "n_pred": n_pred, "n_correct": n_ok}
    if vocab is not None:
        out.update(oov_rate=n_oov / n_gold if n_gold else 0.0,
                   oov_recall=n_oov_ok / n_oov if n_oov else 0.0,
                   iv_recall=n_iv_ok / n_iv if n_iv else 0.0)
    return out


#: scorer: fraction of tokens labelled right
token_accuracy_scorer = make_scorer(token_accuracy)
#: scorer: fraction of sequences labelled entirely right
sequence_accuracy_scorer = make_scorer(sequence_accuracy)
#: scorer: word F1 of BMES character tags (equals segmentation_scores' F1)
segmentation_f1_scorer = make_span_f1_scorer("BMES")
