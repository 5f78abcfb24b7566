"""The corpora of the label-count sweep (``claims/bench_label_sweep.py``).

Each builder returns ``(Xtr, ytr, Xte, yte, names)``: train and test as
:class:`skcrf.Sequences` of binary features, label lists, and the feature
names (CRFsuite gets, per token, the names of its active features: the same
features for both engines). Real corpora from ``--data``; synthetic ones
from a fixed seed.

=============  ======  ======================================================
name           labels  what
=============  ======  ======================================================
sxu            4       SIGHAN 2008 SXU segmentation (B/M/E/S), skcrf's default
                       character templates + a dictionary of training words
ner-bio        9       CoNLL-2002 Spanish NER, BIO, sklearn-crfsuite tutorial
                       features
gsd-upos       15      UD Chinese GSD, universal POS, word features
ner-bioes      17      CoNLL-2002 Spanish NER re-tagged BIOES, same features
gsd-xpos       42      UD Chinese GSD, language-specific POS, word features
esp-pos        59      CoNLL-2002 Spanish, POS tags from words (tutorial
                       features without the POS ones)
synth-100      100     synthetic POS-like corpus (each word has 1-3 labels)
synth-200      200     the same with 200 labels
=============  ======  ======================================================
"""

import os
from collections import Counter

import numpy as np

LABELS = {"sxu": 4, "ner-bio": 9, "gsd-upos": 15, "ner-bioes": 17, "gsd-xpos": 42,
          "esp-pos": 59, "synth-100": 100, "synth-200": 200}


def build(name, data, limit=None):
    """The corpus ``name`` (a key of :data:`LABELS`), first ``limit`` training
    sentences."""
    if name == "sxu":
        return _sxu(os.path.join(data, "sighan2008_sxu"), limit)
    if name.startswith("ner-"):
        return _conll_ner(os.path.join(data, "conll2002"), name.split("-")[1], limit)
    if name.startswith("gsd-"):
        return _gsd(os.path.join(data, "ud_chinese_gsd"), name.split("-")[1], limit)
    if name == "esp-pos":
        return _esp_pos(os.path.join(data, "conll2002"), limit)
    if name.startswith("synth-"):
        return _synthetic(int(name.split("-")[1]), limit)
    raise ValueError(f"unknown corpus {name!r}; one of {sorted(LABELS)}")


# ------------------------------------------------------------------ helpers
def _vectorise(train_feats, test_feats):
    """Binary CSR of feature dicts (CRFsuite's convention: a string value v of
    key k is the attribute 'k:v'), and the feature names."""
    from sklearn.feature_extraction import DictVectorizer

    from skcrf import Sequences

    def attrs(d):
        out = {}
        for k, v in d.items():
            if isinstance(v, str):
                out[f"{k}:{v}"] = 1
            elif v == 1:            # True, 1, 1.0
                out[k] = 1
            elif v != 0:
                raise ValueError(f"the sweep's features must be binary: {k}={v!r}")
        return out

    def binary(seqs):
        return [attrs(d) for seq in seqs for d in seq]

    dv = DictVectorizer(separator=":")
    Xtr = dv.fit_transform(binary(train_feats))
    Xte = dv.transform(binary(test_feats))
    names = np.asarray(dv.get_feature_names_out(), dtype=object)
    return (Sequences(Xtr, [len(s) for s in train_feats]),
            Sequences(Xte, [len(s) for s in test_feats]), names)


def _word_features(words, i, extra=None):
    """Word identity, affixes, shape and +-1 neighbours (POS-tagging style)."""
    w = words[i]
    f = {"bias": 1, "w": w.lower(), "p1": w[:1], "p2": w[:2], "s1": w[-1:], "s2": w[-2:],
         "s3": w[-3:], "len": str(min(len(w), 6)), "title": w.istitle(),
         "upper": w.isupper(), "digit": w.isdigit()}
    if extra is not None:
        f.update(extra[i])
    for d, name in ((-1, "-1"), (1, "+1")):
        j = i + d
        if 0 <= j < len(words):
            f[name + "w"] = words[j].lower()
            f[name + "s2"] = words[j][-2:]
        else:
            f[name + "edge"] = True
    return f


def _limit(seqs, limit):
    return seqs if limit is None else seqs[:limit]


# ------------------------------------------------------------------ corpora
def _sxu(path, limit):
    from skcrf import SequenceFeaturizer
    from skcrf.segmentation import read_segmented, words_to_tags

    train = _limit(read_segmented(os.path.join(path, "train.txt")), limit)
    test = read_segmented(os.path.join(path, "test.txt"))
    counts = Counter(w for s in train for w in s)
    f = SequenceFeaturizer(dictionary={w for w, c in counts.items() if c >= 5})
    Xtr = f.fit_transform(["".join(s) for s in train])
    Xte = f.transform(["".join(s) for s in test])
    names = np.asarray(f.get_feature_names_out(), dtype=object)
    return (Xtr, [words_to_tags(s) for s in train], Xte, [words_to_tags(s) for s in test],
            names)


def _bioes(tags):
    out = []
    for i, t in enumerate(tags):
        nxt = tags[i + 1] if i + 1 < len(tags) else "O"
        if t == "O":
            out.append(t)
            continue
        kind, typ = t.split("-", 1)
        ends = nxt != f"I-{typ}"
        if kind == "B":
            out.append(("S-" if ends else "B-") + typ)
        else:
            out.append(("E-" if ends else "I-") + typ)
    return out


def _conll_ner(path, scheme, limit):
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import load_conll2002

    trf, ytr, tef, yte = load_conll2002(path, limit)
    if scheme == "bioes":
        ytr, yte = [_bioes(s) for s in ytr], [_bioes(s) for s in yte]
    elif scheme != "bio":
        raise ValueError(scheme)
    Xtr, Xte, names = _vectorise(trf, tef)
    return Xtr, ytr, Xte, yte, names


def _gsd(path, column, limit):
    from skcrf.datasets import read_conllu

    col = {"upos": "upos", "xpos": "xpos"}[column]
    tr = _limit(read_conllu(os.path.join(path, "train.conllu"), columns=("form", col)),
                limit)
    te = read_conllu(os.path.join(path, "test.conllu"), columns=("form", col))

    def feats(sents):
        return [[_word_features([t[0] for t in s], i) for i in range(len(s))] for s in sents]

    Xtr, Xte, names = _vectorise(feats(tr), feats(te))
    return Xtr, [[t[1] for t in s] for s in tr], Xte, [[t[1] for t in s] for s in te], names


def _esp_pos(path, limit):
    from skcrf.datasets import read_conll

    Xtr, _ = read_conll(os.path.join(path, "esp.train"))
    Xte, _ = read_conll(os.path.join(path, "esp.testb"))
    Xtr = _limit(Xtr, limit)

    def feats(sents):
        return [[_word_features([t[0] for t in s], i) for i in range(len(s))] for s in sents]

    A, B, names = _vectorise(feats(Xtr), feats(Xte))
    return A, [[t[1] for t in s] for s in Xtr], B, [[t[1] for t in s] for s in Xte], names


def _synthetic(n_labels, limit, n_sent=6000, seed=0):
    """A POS-like corpus: labels follow a sparse Markov chain (each label has
    about 8 likely successors); each word of a 30k vocabulary belongs to 1-3
    labels and each label emits its words by a Zipf law; the words are made
    of syllables, so affixes are shared between words of a label."""
    rng = np.random.default_rng(seed + n_labels)
    V = 30_000
    syll = [a + b for a in "bcdfgklmnprstvz" for b in "aeiou"]
    vocab = ["".join(rng.choice(syll, size=rng.integers(1, 4))) + str(k % 97)
             for k in range(V)]
    n_classes = 1 + rng.geometric(0.6, size=V).clip(max=3) - 1
    members = [[] for _ in range(n_labels)]
    for w in range(V):
        for lab in rng.choice(n_labels, size=n_classes[w], replace=False):
            members[lab].append(w)
    emit = []
    for lab in range(n_labels):
        ws = np.asarray(members[lab] or [lab])
        p = np.cumsum(1.0 / np.arange(1, ws.size + 1) ** 1.1)
        emit.append((ws, p / p[-1]))
    trans = np.full((n_labels, n_labels), 0.02 / n_labels)
    for lab in range(n_labels):
        k = min(8, n_labels)
        trans[lab, rng.choice(n_labels, size=k, replace=False)] += rng.dirichlet(np.ones(k))
    cum = np.cumsum(trans / trans.sum(axis=1, keepdims=True), axis=1)

    def sentences(n):
        out = []
        for _ in range(n):
            T = int(rng.integers(5, 35))
            u, v = rng.random(T), rng.random(T)
            y = [int(rng.integers(n_labels))]
            for t in range(1, T):
                y.append(min(int(np.searchsorted(cum[y[-1]], u[t])), n_labels - 1))
            words = []
            for t, lab in enumerate(y):
                ws, c = emit[lab]
                words.append(vocab[ws[min(int(np.searchsorted(c, v[t])), ws.size - 1)]])
            out.append((words, [f"T{lab}" for lab in y]))
        return out

    train = _limit(sentences(n_sent), limit)
    test = sentences(n_sent // 6)

    def feats(sents):
        return [[_word_features(w, i) for i in range(len(w))] for w, _ in sents]

    Xtr, Xte, names = _vectorise(feats(train), feats(test))
    return Xtr, [y for _, y in train], Xte, [y for _, y in test], names


def training_problem(Xtr, ytr):
    """What the training objective of a fit on ``(Xtr, ytr)`` is built from,
    as ``LinearChainCRF`` builds it (c2 only, seen transitions, no start /
    end weights): ``(y, n_labels, arrays, weights, counts, layout)`` — the
    label index per token (int32), the kernels' arrays, unit sequence
    weights, the (feature, label) counts and the parameter layout."""
    from skcrf._training.layout import build_layout, count_pairs

    classes, y = np.unique(np.concatenate([np.asarray(s) for s in ytr]), return_inverse=True)
    y = y.astype(np.int32).reshape(-1)
    arrays, weights = Xtr.kernel_arrays(), np.ones(len(Xtr))
    counts = count_pairs(arrays, y, weights, classes.size, Xtr.n_features)
    layout = build_layout(counts, all_possible_transitions=False, start_end=False)
    return y, classes.size, arrays, weights, counts, layout
