"""Tuning the word-segmentation features on a split of the SXU *training* data.

The SXU test set is never read here: the last ``--dev-fraction`` of the
training sentences are held out as a development set, and every candidate
setting is trained on the rest and scored on them (word F1, OOV recall
against the vocabulary of the training part). What wins here becomes
``WordSegmenter``'s defaults; ``bench_cws.py`` then measures those, once, on
the test set.

    python benchmarks/tuning/cws_tuning.py --data ../shared/data/sighan2008_sxu [--only NAME ...]
"""

import argparse
import os
import sys
import time
from collections import Counter
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from _common import DEFAULT_DATA, machine
from numba import njit

from skcrf import LinearChainCRF, SequenceFeaturizer
from skcrf.feature_extraction import _hashing as H
from skcrf.feature_extraction._accessor_variety import _bin_key
from skcrf.feature_extraction._jackknife import _code_points
from skcrf.feature_extraction._templates import Template, Window, _template_id
from skcrf.metrics import segmentation_scores
from skcrf.segmentation import read_segmented, tags_to_words, words_to_tags


class Featurizer(SequenceFeaturizer):
    """SequenceFeaturizer with extra templates for the experiments."""

    def __init__(self, *, extra=(), words=None, **kw):
        super().__init__(**kw)
        self.extra = extra
        self.words = words

    def _make_templates(self, units):
        ts = super()._make_templates(units)
        extra = []
        if self.words is not None:
            from skcrf.feature_extraction._dictionary import DictionaryWords

            extra.append(DictionaryWords(self.words, folds=self.dictionary_folds))
        if "pmi" in self.extra:
            cps = units.ids[0]
            texts = [cps[units.offsets[i]:units.offsets[i + 1]]
                     for i in range(units.n_sequences)]
            extra.append(Cohesion(texts, self.unlabeled_text or ()))
        if "tri" in self.extra:
            extra.append(Window([(("col", 0), -1), (("col", 0), 0), (("col", 0), 1)],
                                ["C[-1]C[0]C[1]=", 0, "", 1, "", 2]))
        from skcrf.feature_extraction._template_set import TemplateSet

        return TemplateSet(ts.templates + extra)


@njit(cache=False)
def _pair_counts(cps, offsets, table):
    for s in range(offsets.size - 1):
        for t in range(offsets[s] + 1, offsets[s + 1]):
            k = _pair_key(cps[t - 1], cps[t])
            j = H._probe(table, k)
            table[j, 0] = k
            table[j, 1] += np.uint64(1)


@njit(cache=False)
def _pair_key(a, b):
    return H._finish(H._splitmix(H._splitmix(np.uint64(a)) ^ np.uint64(b)))


@njit(cache=False)
def _cohesion_keys(cps, offsets, table, uni, n_total, tids, keys, slot0):
    """slot 0: bin of the pair (t-1, t), slot 1: of (t, t+1); a bin is the
    floored PMI (clipped to -3..9) and the pair count bucket (1, 2-3, 4+), or
    0 for a pair the statistics do not have."""
    for s in range(offsets.size - 1):
        a, b = offsets[s], offsets[s + 1]
        for t in range(a + 1, b):
            k = _pair_key(cps[t - 1], cps[t])
            j = H._probe(table, k)
            bn = 0
            if table[j, 0] == k:
                c = np.float64(table[j, 1])
                pmi = np.log2(c * n_total / (np.float64(uni[cps[t - 1]]) * uni[cps[t]]))
                p = min(max(int(np.floor(pmi)), -3), 9) + 3
                cb = 0 if c < 2 else (1 if c < 4 else 2)
                bn = 1 + p * 3 + cb
            keys[t, slot0] = _bin_key(tids[0], bn)
            keys[t - 1, slot0 + 1] = _bin_key(tids[1], bn)


class Cohesion(Template):
    """Experimental: pointwise mutual information of adjacent characters (from
    the training text plus unlabeled text), binned."""

    n_slots = 2

    def __init__(self, sequences, texts=()):
        extra, extra_offsets = _code_points(list(texts))
        lengths = [len(q) for q in sequences] + np.diff(extra_offsets).tolist()
        cps = np.concatenate([np.asarray(q, dtype=np.int64) for q in sequences] + [extra])
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        self.table = H.new_table(cps.size, width=2)
        _pair_counts(cps, offsets, self.table)
        self.uni = np.bincount(cps, minlength=0x110000).astype(np.float64)
        self.n_total = float(cps.size)

    def description(self):
        return "cohesion-exp"

    def _tids(self):
        return np.array([_template_id(f"cohesion|{k}") for k in range(2)], dtype=np.int64)

    def write_keys(self, units, sources, source_row, keys, slot0, fitting=False):
        uni = np.maximum(self.uni, 1.0)
        _cohesion_keys(units.ids[0], units.offsets, self.table, uni, self.n_total,
                       self._tids(), keys, slot0)

    def feature_values(self, units, rows, subs, keys=None):
        tids = self._tids()
        bins = {int(_bin_key(tids[k], b)): b for k in range(2) for b in range(1 + 13 * 3)}
        return [str(bins[int(k)]) for k in keys]

    def name(self, sub, values):
        return f"pmi_{'left' if sub == 0 else 'right'}={values[0]}"


CONFIGS = {
    # name: (tag scheme, c2, featurizer kwargs, dictionary min count or None)
    "base4": ("BMES", 1.0, {}, None),
    "base6": ("BB2B3MES", 1.0, {}, None),
    "base6_c03": ("BB2B3MES", 0.3, {}, None),
    "base6_c3": ("BB2B3MES", 3.0, {}, None),
    "dict_all_nojack": ("BB2B3MES", 1.0, {"dictionary_folds": 1}, 1),
    "dict_all_jack": ("BB2B3MES", 1.0, {}, 1),
    "av5": ("BB2B3MES", 1.0, {"accessor_variety": 5}, None),
    "dict_av5": ("BB2B3MES", 1.0, {"accessor_variety": 5}, 1),
    "dict_av5_cls": ("BB2B3MES", 1.0, {"accessor_variety": 5, "char_classes": True}, 1),
    "dict_av5_cls_tri": ("BB2B3MES", 1.0, {"accessor_variety": 5, "char_classes": True,
                                            "extra": ("tri",)}, 1),
    # lexicalised dictionary words (jackknifed), without / with the length flags
    "words_jack": ("BB2B3MES", 0.3, {"words": True}, None),
    "words_nojack": ("BB2B3MES", 0.3, {"words": True, "dictionary_folds": 1}, None),
    "words_flags_jack": ("BB2B3MES", 0.3, {"words": True}, 1),
    "words_cls": ("BB2B3MES", 0.3, {"words": True, "char_classes": True}, None),
    "base6_c01": ("BB2B3MES", 0.1, {}, None),
    # combinations (c2 = 0.3, character classes)
    "cls_words_dict": ("BB2B3MES", 0.3, {"char_classes": True, "words": True}, 1),
    "cls_words_dict3": ("BB2B3MES", 0.3, {"char_classes": True, "words": True,
                                          "dictionary_folds": 3}, 1),
    "cls_words_dict2": ("BB2B3MES", 0.3, {"char_classes": True, "words": True,
                                          "dictionary_folds": 2}, 1),
    "cls_words_av": ("BB2B3MES", 0.3, {"char_classes": True, "words": True,
                                       "accessor_variety": 5}, None),
    "cls_words_av_unl": ("BB2B3MES", 0.3, {"char_classes": True, "words": True,
                                           "accessor_variety": 5, "unlabeled": True}, None),
    "cls_c03": ("BB2B3MES", 0.3, {"char_classes": True}, None),
    # the WordSegmenter defaults (dict_av5_cls) at other c2, with the dev text
    # as unlabeled text, and with fewer jackknife folds
    "dict_av5_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True}, 1),
    "dict_av5_cls_unl": ("BB2B3MES", 1.0, {"accessor_variety": 5, "char_classes": True,
                                           "unlabeled": True}, 1),
    "av5_cls_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                          "unlabeled": True}, None),
    "av5_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True}, None),
    # after the switch to contiguous jackknife folds (dictionary) and the
    # jackknifed accessor variety ("javN": N folds)
    "cdict_av5_cls": ("BB2B3MES", 1.0, {"accessor_variety": 5, "char_classes": True}, 1),
    "cdict_av5_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True}, 1),
    "jav10_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                        "accessor_variety_folds": 10}, None),
    "cdict_jav10_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                              "accessor_variety_folds": 10}, 1),
    "jav10_cls_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                            "accessor_variety_folds": 10, "unlabeled": True},
                          None),
    "cdict_jav10_cls_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                  "accessor_variety_folds": 10,
                                                  "unlabeled": True}, 1),
    "cdict_av5_cls_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                "unlabeled": True}, 1),
    "cdict_jav10_cls_c01": ("BB2B3MES", 0.1, {"accessor_variety": 5, "char_classes": True,
                                              "accessor_variety_folds": 10}, 1),
    "cwords_jav10_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                               "accessor_variety_folds": 10, "words": True},
                             None),
    "dict3_av5_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                            "dictionary_folds": 3}, 1),
    # round 3: the with-unlabeled-text setting (c2, n-gram length of the statistics)
    "cdict_av5_cls_unl_c01": ("BB2B3MES", 0.1, {"accessor_variety": 5, "char_classes": True,
                                                "unlabeled": True}, 1),
    "cdict_av5_cls_unl_c1": ("BB2B3MES", 1.0, {"accessor_variety": 5, "char_classes": True,
                                               "unlabeled": True}, 1),
    "cdict_av6_cls_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 6, "char_classes": True,
                                                "unlabeled": True}, 1),
    "cdict_av4_cls_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 4, "char_classes": True,
                                                "unlabeled": True}, 1),
    # adjacent-character PMI (experimental template above)
    "cdict_av5_cls_pmi_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                    "unlabeled": True, "extra": ("pmi",)}, 1),
    "jav10_cls_pmi_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                            "accessor_variety_folds": 10,
                                            "extra": ("pmi",)}, None),
    "av5_cls_pmi_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                              "unlabeled": True, "adjacent_pmi": True}, None),
    # dictionary jackknife folds in the with-unlabeled-text setting (WordSegmenter's
    # unlabeled-text defaults otherwise: av not jackknifed, PMI on)
    "cdict3_av5_cls_lpmi_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                      "unlabeled": True, "adjacent_pmi": True,
                                                      "dictionary_folds": 3}, 1),
    "cdict5_av5_cls_lpmi_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                      "unlabeled": True, "adjacent_pmi": True,
                                                      "dictionary_folds": 5}, 1),
    "cdict5_jav10_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                               "accessor_variety_folds": 10,
                                               "dictionary_folds": 5}, 1),
    "cdict3_jav10_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                               "accessor_variety_folds": 10,
                                               "dictionary_folds": 3}, 1),
    "cdict2_av5_cls_lpmi_unl_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                      "unlabeled": True, "adjacent_pmi": True,
                                                      "dictionary_folds": 2}, 1),
    "cdict2_jav10_cls_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                               "accessor_variety_folds": 10,
                                               "dictionary_folds": 2}, 1),
    # the naive path (SequenceFeaturizer(dictionary=<every training word>) +
    # LinearChainCRF(): BMES, c2 = 1) with 10 / 2 dictionary folds
    "naive_dict10": ("BMES", 1.0, {"dictionary_folds": 10}, 1),
    "naive_dict2": ("BMES", 1.0, {"dictionary_folds": 2}, 1),
    # the library's AdjacentPMI, jackknifed with the accessor variety ("jpmi")
    "cdict_jav10_cls_jpmi_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                   "accessor_variety_folds": 10,
                                                   "adjacent_pmi": True}, 1),
    "jav10_cls_jpmi_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                             "accessor_variety_folds": 10,
                                             "adjacent_pmi": True}, None),
    # feature count cut-off: n-grams seen once (twice) in training dropped, so that
    # training tokens show the unseen n-grams that new words show
    "cdict2_jav10_cls_mf2_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                   "accessor_variety_folds": 10,
                                                   "dictionary_folds": 2, "min_freq": 2}, 1),
    "cdict2_jav10_cls_mf3_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                   "accessor_variety_folds": 10,
                                                   "dictionary_folds": 2, "min_freq": 3}, 1),
    "cdict_jav10_cls_pmi_c03": ("BB2B3MES", 0.3, {"accessor_variety": 5, "char_classes": True,
                                                  "accessor_variety_folds": 10,
                                                  "extra": ("pmi",)}, 1),
}


def run(name, train, dev, n_jobs):
    scheme, c2, kw, dict_min = CONFIGS[name]
    kw = dict(kw)
    counts = Counter(w for s in train for w in s)
    if dict_min is not None:
        kw["dictionary"] = {w for w, c in counts.items() if c >= dict_min}
    if kw.pop("words", False):
        kw["words"] = set(counts)
    if kw.pop("unlabeled", False):    # the dev text, as the closed track allows
        kw["unlabeled_text"] = ["".join(s) for s in dev]
    X = ["".join(s) for s in train]
    y = [words_to_tags(s, scheme) for s in train]
    Xd = ["".join(s) for s in dev]
    t = time.perf_counter()
    f = Featurizer(**kw)
    S = f.fit_transform(X)
    Sd = f.transform(Xd)
    t_feat = time.perf_counter() - t
    t = time.perf_counter()
    crf = LinearChainCRF(c2=c2, constraints=scheme, n_jobs=n_jobs).fit(S, y)
    t_fit = time.perf_counter() - t
    pred = [tags_to_words(x, p) for x, p in zip(Xd, crf.predict(Sd))]
    sc = segmentation_scores(dev, pred, train_words={w for s in train for w in s})
    print(f"| {name} | {sc['f1']:.4f} | {sc['oov_recall']:.4f} | {sc['iv_recall']:.4f} | "
          f"{S.n_features:,} | {t_feat:.1f} | {t_fit:.0f} | {crf.n_iter_} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "sighan2008_sxu"))
    ap.add_argument("--dev-fraction", type=float, default=0.1)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--n-jobs", type=int, default=-1)
    args = ap.parse_args()
    sents = read_segmented(os.path.join(args.data, "train.txt"))
    n_dev = int(len(sents) * args.dev_fraction)
    train, dev = sents[:-n_dev], sents[-n_dev:]
    print(f"# SXU tuning on the training data only ({len(train)} train / {len(dev)} dev "
          f"sentences) — {date.today()} — {machine()}")
    print("| setting | dev word F1 | OOV recall | IV recall | features | featurise s | "
          "fit s | iterations |\n|---|---|---|---|---|---|---|---|", flush=True)
    for name in args.only or CONFIGS:
        run(name, train, dev, args.n_jobs)


if __name__ == "__main__":
    main()
