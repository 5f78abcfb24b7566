"""SequenceFeaturizer: every template on hand-made input, by name and value."""

import numpy as np
import pytest

from skcrf import LinearChainCRF, SequenceFeaturizer, Sequences
from skcrf.feature_extraction._featurizer import char_type, word_shape


def names_at(f, X, seq, t):
    names = f.get_feature_names_out()
    row = X[seq][t]
    assert (row.data == 1.0).all()
    return set(names[row.indices])


def only(**kw):
    base = dict(unit_offsets=(), ngram_offsets=(), char_type_offsets=(), bias=False,
                word_shape=False)
    base.update(kw)
    return SequenceFeaturizer(**base)


def test_unit_offsets_with_padding():
    f = only(unit_offsets=(-2, -1, 0, 1))
    X = f.fit_transform(["上海市"])
    assert names_at(f, X, 0, 0) == {"C[-2]=<s-2>", "C[-1]=<s-1>", "C[0]=上", "C[1]=海"}
    assert names_at(f, X, 0, 2) == {"C[-2]=上", "C[-1]=海", "C[0]=市", "C[1]=</s+1>"}


def test_ngrams_including_skip_pair():
    f = only(ngram_offsets=((-1, 0), (0, 1), (-1, 1)))
    X = f.fit_transform(["上海市"])
    assert names_at(f, X, 0, 1) == {"C[-1]C[0]=上海", "C[0]C[1]=海市", "C[-1]C[1]=上市"}
    assert names_at(f, X, 0, 0) == {"C[-1]C[0]=<s-1>上", "C[0]C[1]=上海",
                                    "C[-1]C[1]=<s-1>海"}


def test_same_feature_same_column_across_sequences():
    f = only(unit_offsets=(0,))
    X = f.fit_transform(["上海", "海上"])
    assert X[0][0].indices.tolist() == X[1][1].indices.tolist()
    assert X.n_features == 2


def test_char_types_including_full_width():
    assert [char_type(c) for c in "2２٣"] == ["digit"] * 3
    assert [char_type(c) for c in "aZＡｚé"] == ["latin"] * 5
    assert [char_type(c) for c in ",，。、：“!"] == ["punct"] * 7
    assert [char_type(c) for c in "上海〇𠀋"] == ["cjk"] * 4
    assert [char_type(c) for c in "+％$"] == ["punct"] * 3
    assert [char_type(c) for c in "😀あ"] == ["other"] * 2
    f = only(char_type_offsets=(-1, 0, 1))
    X = f.fit_transform(["２Ａ，上"])
    assert names_at(f, X, 0, 0) == {"T[-1]=<s>", "T[0]=digit", "T[1]=latin"}
    assert names_at(f, X, 0, 2) == {"T[-1]=latin", "T[0]=punct", "T[1]=cjk"}
    assert names_at(f, X, 0, 3) == {"T[-1]=punct", "T[0]=cjk", "T[1]=</s>"}


def test_dictionary_features_on_a_hand_checked_sentence():
    # 上海市长江大桥: dictionary matches 上海(0-1) 上海市(0-2) 市长(2-3) 长江(3-4)
    # 长江大桥(3-6) 大桥(5-6) 江(4): all of them, not a greedy maximum match
    words = ["上海", "上海市", "市长", "长江", "长江大桥", "大桥", "江"]
    f = only(dictionary=words, dictionary_max_len=3, dictionary_folds=1)
    X = f.fit_transform(["上海市长江大桥"])
    want = {
        0: {"dict_begin_len2", "dict_begin_len3"},
        1: {"dict_end_len2", "dict_mid_len3"},
        2: {"dict_end_len3", "dict_begin_len2"},
        3: {"dict_end_len2", "dict_begin_len2", "dict_begin_len3"},  # 长江大桥: len 4 -> 3
        4: {"dict_end_len2", "dict_begin_len1", "dict_end_len1", "dict_mid_len3"},
        5: {"dict_begin_len2", "dict_mid_len3"},
        6: {"dict_end_len2", "dict_end_len3"},
    }
    for t, names in want.items():
        assert names_at(f, X, 0, t) == names, t


def test_jackknifed_dictionary_features_hide_words_of_the_sentences_own_fold():
    # 3 contiguous folds of 4 sentences: 0, 0, 1, 2. 上海 occurs in folds 0 and
    # 2, 北京 only in fold 1: while fitting, sentence 2 does not see 北京;
    # transform does
    f = only(dictionary=["上海", "北京"], dictionary_folds=3)
    X = f.fit_transform(["上海", "上海", "北京", "上海"])
    assert names_at(f, X, 0, 0) == {"dict_begin_len2"}
    assert names_at(f, X, 2, 0) == set()
    Z = f.transform(["北京"])
    assert names_at(f, Z, 0, 0) == {"dict_begin_len2"}
    # fit + transform of the training text is not jackknifed; fit_transform is
    assert f.transform(["上海", "上海", "北京"])[2].nnz == 2


def test_jackknife_folds_are_contiguous_blocks():
    from skcrf.feature_extraction._jackknife import jackknife_folds

    assert jackknife_folds(7, 3).tolist() == [0, 0, 0, 1, 1, 2, 2]
    assert jackknife_folds(2, 3).tolist() == [0, 1]
    assert jackknife_folds(0, 3).tolist() == []
    # a word recurring in neighbouring sentences stays unknown to its own fold
    f = only(dictionary=["上海"], dictionary_folds=2)
    X = f.fit_transform(["上海", "上海", "北京", "北京"])
    assert names_at(f, X, 0, 0) == set() and names_at(f, X, 1, 0) == set()


def test_accessor_variety_bins_by_hand():
    # 上海 is preceded by <s>, 在, 到 (3: each start counts) and followed by 市,
    # 人, </s> -> AV 3 -> bin 1; 海市 occurs once -> AV 1 -> bin 0
    f = only(accessor_variety=2)
    X = f.fit_transform(["上海市", "在上海人", "到上海"])
    assert names_at(f, X, 0, 0) == {"av_begin_len2=1"}
    assert names_at(f, X, 0, 1) == {"av_end_len2=1", "av_begin_len2=0"}
    assert names_at(f, X, 0, 2) == {"av_end_len2=0"}
    # unlabeled text adds contexts: now 市 follows 上海 twice more, 们 once
    g = only(accessor_variety=2, unlabeled_text=["上海们", "去上海市"])
    Z = g.fit_transform(["上海市", "在上海人", "到上海"])
    assert names_at(g, Z, 0, 0) == {"av_begin_len2=2"}   # 5 left, 4 right -> 4 -> bin 2


def test_jackknifed_accessor_variety_reads_the_other_folds():
    X = ["在上海", "到上海市", "去北京", "在北京人"]
    # 2 folds: sentences 0-1 and 2-3. 上海 occurs only in fold 0, 北京 only in
    # fold 1: while fitting, each is unknown (bin 0) to its own sentences
    f = only(accessor_variety=2, accessor_variety_folds=2)
    Z = f.fit_transform(X)
    assert names_at(f, Z, 0, 1) == {"av_begin_len2=0", "av_end_len2=0"}
    assert names_at(f, Z, 2, 1) == {"av_begin_len2=0", "av_end_len2=0"}
    # 在上 reads fold 1's 在北 statistics? no: 在上 itself never occurs there -> 0
    assert names_at(f, Z, 0, 0) == {"av_begin_len2=0"}
    # unlabeled text is every fold's: with 上海 in it, fold 0 sees its contexts there
    g = only(accessor_variety=2, accessor_variety_folds=2, unlabeled_text=["从上海来", "向上海去"])
    W = g.fit_transform(X)
    assert names_at(g, W, 0, 1) == {"av_begin_len2=1", "av_end_len2=0"}   # 从/向, 来/去
    # not jackknifed: the sentence's own contexts count (上海: 在, 到 / </s>, 市)
    h = only(accessor_variety=2)
    assert names_at(h, h.fit_transform(X), 0, 1) == {"av_begin_len2=1", "av_end_len2=0"}


def test_reduplication_features_only_inside_the_sentence():
    """C[-1]=C[0] fires where a character repeats the one before it, never at a
    sentence start (it once read the padding there: a start-of-sentence
    feature under the reduplication feature's name)."""
    f = only(char_classes=True)
    X = f.fit_transform(["看看书", "22"])
    red = {"C[-1]=C[0]", "C[0]=C[1]", "C[0]=C[2]"}
    assert names_at(f, X, 0, 0) & red == {"C[0]=C[1]"}
    assert names_at(f, X, 0, 1) & red == {"C[-1]=C[0]"}
    assert names_at(f, X, 0, 2) & red == set()
    assert names_at(f, X, 1, 0) & red == {"C[0]=C[1]"}
    assert names_at(f, X, 1, 1) & red == {"C[-1]=C[0]"}
    assert list(f.get_feature_names_out()).count("C[-1]=C[0]") == 1


def test_character_classes_know_traditional_forms():
    from skcrf.feature_extraction._char_classes import cws_class

    # a corpus in traditional characters (the segmenter's defaults may meet one)
    assert [cws_class(c) for c in "兩两時时號号"] == ["digit"] * 2 + ["date"] * 4


def test_dictionary_matches_do_not_cross_sentences():
    f = only(dictionary=["海上"])
    X = f.fit_transform(["上海", "上海"])
    assert X.X.nnz == 0 and f.n_features_out_ == 0
    Z = f.transform(["海上"])
    assert Z.X.nnz == 0


def test_word_shape_features_for_tokens():
    assert word_shape("Melbourne") == "Xxxxx"
    assert word_shape("12") == "dd"
    assert word_shape("U.S.") == "X.X."
    f = only(word_shape=True)
    X = f.fit_transform([["Melbourne", "U.S.", "2007"]])
    assert names_at(f, X, 0, 0) == {
        "lower=melbourne", "prefix1=M", "prefix2=Me", "prefix3=Mel", "suffix1=e",
        "suffix2=ne", "suffix3=rne", "shape=Xxxxx", "is_title"}
    assert {"shape=X.X.", "is_upper", "is_title"} <= names_at(f, X, 0, 1)
    assert {"shape=dddd", "has_digit"} <= names_at(f, X, 0, 2)


def test_word_shape_auto_is_on_for_tokens_and_off_for_chars():
    f = SequenceFeaturizer()
    f.fit([["Hello", "world"]])
    assert "lower=hello" in set(f.get_feature_names_out())
    g = SequenceFeaturizer().fit(["Hello"])
    assert not any(n.startswith("lower=") for n in g.get_feature_names_out())


def test_columns_select_token_columns():
    X_raw = [[("Melbourne", "NP"), ("(", "Fpa")]]
    f = only(unit_offsets=(0,), columns=(1,))
    X = f.fit_transform(X_raw)
    assert names_at(f, X, 0, 0) == {"C1[0]=NP"}
    g = only(unit_offsets=(0,))
    Z = g.fit_transform(X_raw)
    assert names_at(g, Z, 0, 1) == {"C[0]=(", "C1[0]=Fpa"}
    h = only(ngram_offsets=((0, 1),), columns=(0,))
    W = h.fit_transform(X_raw)
    assert names_at(h, W, 0, 0) == {"C[0]C[1]=Melbourne|("}


def test_min_freq_drops_rare_features():
    f = only(unit_offsets=(0,), min_freq=2)
    X = f.fit_transform(["上海上", "海天"])
    assert set(f.get_feature_names_out()) == {"C[0]=上", "C[0]=海"}
    assert f.feature_counts_.tolist() == [2, 2]
    assert X[1][1].nnz == 0


def test_unseen_features_are_ignored_at_transform():
    f = only(unit_offsets=(0,), bias=True)
    f.fit(["上海"])
    X = f.transform(["海天"])
    assert X.n_features == f.n_features_out_ == 3
    assert names_at(f, X, 0, 0) == {"C[0]=海", "bias"}
    assert names_at(f, X, 0, 1) == {"bias"}


def test_transform_equals_fit_transform():
    data = ["上海推迎奥运", "本报讯２００７年", ""]
    f = SequenceFeaturizer(dictionary=["上海", "奥运"])
    a = f.fit_transform(data)
    assert a == f.transform(data)
    assert a.lengths.tolist() == [6, 8, 0]


def test_unicode_outside_the_bmp():
    f = SequenceFeaturizer(unit_offsets=(0,), ngram_offsets=((0, 1),))
    X = f.fit_transform(["😀𠀋上"])
    names = f.get_feature_names_out()
    assert "C[0]=😀" in names and "C[0]C[1]=😀𠀋" in names
    assert X.lengths.tolist() == [3]


def test_bad_units_name_the_position():
    f = SequenceFeaturizer()
    with pytest.raises(TypeError, match=r"X\[1\]\[1\]"):
        f.fit([["a", "b"], ["c", None]])
    with pytest.raises(TypeError, match=r"X\[1\]"):
        f.fit(["abc", ["a"]])
    with pytest.raises(TypeError, match=r"X\[0\]\[1\]\[1\]"):
        f.fit([[("a", "N"), ("b", 3)]])
    with pytest.raises(ValueError, match=r"X\[0\]\[1\] has 1 column"):
        f.fit([[("a", "N"), ("b",)]])
    with pytest.raises(ValueError, match="empty"):
        f.fit([])
    with pytest.raises(ValueError, match="character input"):
        SequenceFeaturizer(dictionary=["ab"]).fit([["ab"]])
    f.fit(["abc"])
    with pytest.raises(TypeError, match="fitted on chars"):
        f.transform([["abc"]])


def test_pipeline_with_crf_learns_segmentation():
    from sklearn.pipeline import make_pipeline

    from skcrf.segmentation import tags_to_words, words_to_tags

    words = [["上海", "推", "迎", "奥运"], ["本", "报讯"], ["上海", "奥运"]] * 5
    X = ["".join(w) for w in words]
    y = [words_to_tags(w) for w in words]
    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(c2=0.01)).fit(X, y)
    pred = pipe.predict(["上海奥运"])
    assert tags_to_words("上海奥运", pred[0]) == ["上海", "奥运"]
    assert isinstance(pipe[0].transform(X), Sequences)


def _pmi_names_by_python(X, unlabeled, folds):
    """The adjacent-PMI feature names of every token, counted with Counter
    (sentence i of fold f reads the text of the other folds plus the
    unlabeled text; folds=1: all of it)."""
    import math
    from collections import Counter

    from skcrf.feature_extraction._jackknife import jackknife_folds

    fold = jackknife_folds(len(X), folds) if folds > 1 else np.full(len(X), -1)
    stats = {}

    def bin_name(a, b, f):
        if f not in stats:
            texts = [x for i, x in enumerate(X) if f < 0 or fold[i] != f] + list(unlabeled)
            uni = Counter(c for t in texts for c in t)
            pairs = Counter((t[i - 1], t[i]) for t in texts for i in range(1, len(t)))
            stats[f] = uni, pairs, sum(uni.values())
        uni, pairs, n = stats[f]
        c = pairs[(a, b)]
        if c == 0:
            return "unseen"
        p = min(max(math.floor(math.log2(c * n / (uni[a] * uni[b]))), -3), 9)
        return f"{p}|n{'1' if c < 2 else ('2-3' if c < 4 else '4+')}"

    out = []
    for i, x in enumerate(X):
        for t in range(len(x)):
            names = set()
            if t > 0:
                names.add("pmi_before=" + bin_name(x[t - 1], x[t], fold[i]))
            if t + 1 < len(x):
                names.add("pmi_after=" + bin_name(x[t], x[t + 1], fold[i]))
            out.append(names)
    return out


@pytest.mark.parametrize("folds", [1, 3])
def test_adjacent_pmi_bins_as_python_counts_them(folds):
    from skcrf.datasets import load_sample_cws

    X = ["".join(s) for s in load_sample_cws()[:200]]
    unlabeled = X[150:] + ["上海市", "北京"]
    f = only(adjacent_pmi=True, accessor_variety_folds=folds, unlabeled_text=unlabeled)
    Z = f.fit_transform(X)
    names = f.get_feature_names_out()
    got = [set(names[Z.X.indices[Z.X.indptr[r]:Z.X.indptr[r + 1]]]) for r in range(Z.n_tokens)]
    assert got == _pmi_names_by_python(X, unlabeled, folds)
    # transform always reads the statistics of all the text
    T = f.transform(X[:40])
    got = [set(names[T.X.indices[T.X.indptr[r]:T.X.indptr[r + 1]]]) for r in range(T.n_tokens)]
    known = set(names)
    want = _pmi_names_by_python(X, unlabeled, 1)[:T.n_tokens]
    assert got == [w & known for w in want]


def test_adjacent_pmi_by_hand():
    # 10 characters; 上海 occurs 3 times, 上 and 海 3 times each:
    # PMI = log2(3 * 10 / 9) = 1.74 -> 1, and the pair is seen 2-3 times
    f = only(adjacent_pmi=True)
    Z = f.fit_transform(["上海市", "在上海人", "到上海"])
    assert names_at(f, Z, 0, 0) == {"pmi_after=1|n2-3"}
    assert names_at(f, Z, 0, 1) == {"pmi_before=1|n2-3", "pmi_after=1|n1"}
    # 海市 once: log2(1 * 10 / (3 * 1)) = 1.74 -> 1, seen once
    assert names_at(f, Z, 0, 2) == {"pmi_before=1|n1"}
    # new text: a pair never counted is "unseen", a feature fit never saw
    assert f.transform(["海上"]).X.nnz == 0
    # jackknifed over 2 folds: 在上 and 在北 are each unknown to the other fold
    g = only(adjacent_pmi=True, accessor_variety_folds=2)
    W = g.fit_transform(["在上海", "到上海市", "去北京", "在北京人"])
    assert names_at(g, W, 0, 0) == {"pmi_after=unseen"}
    assert names_at(g, W, 3, 0) == {"pmi_after=unseen"}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_statistics_features_survive_the_model_file(tmp_path):
    from sklearn.pipeline import make_pipeline

    from skcrf import load_model
    from skcrf.datasets import load_sample_cws
    from skcrf.io._estimators import save_model
    from skcrf.segmentation import words_to_tags

    sents = load_sample_cws()[:120]
    X = ["".join(s) for s in sents]
    y = [words_to_tags(s, "BMES") for s in sents]
    pipe = make_pipeline(SequenceFeaturizer(adjacent_pmi=True, accessor_variety=3,
                                            accessor_variety_folds=3, unlabeled_text=X[100:]),
                         LinearChainCRF(max_iter=15)).fit(X[:100], y[:100])
    loaded = load_model(save_model(pipe, tmp_path / "m.skcrf"))
    assert loaded.predict(X[100:]) == [list(p) for p in pipe.predict(X[100:])]
    names = pipe[0].get_feature_names_out()
    assert any(n.startswith("pmi_before=") for n in names)
    assert loaded[0].get_feature_names_out().tolist() == names.tolist()


def test_a_template_given_twice_is_one_feature_in_fit_and_transform():
    """Two identical templates write the same keys in two slots: fit_transform
    (which indexes slot by slot) must agree with transform."""
    f = SequenceFeaturizer(unit_offsets=(0, 0, 1), ngram_offsets=(), char_type_offsets=(),
                           bias=False)
    X = ["上海上", "海上"]
    A = f.fit_transform(X)
    B = f.transform(X)
    assert f.n_features_out_ == len(set(f.get_feature_names_out()))
    for a, b in zip(A, B):
        np.testing.assert_array_equal(a.toarray(), b.toarray())


@pytest.mark.parametrize("X, params", [
    (["上海推迎奥运看看", "本报讯２００７年ＡＢ", "", "研究研究上海"],
     dict(dictionary=["上海", "奥运", "研究"], dictionary_folds=1, char_classes=True,
          accessor_variety=3, adjacent_pmi=True)),
    ([[("Madrid", "NP"), ("en", "PREP")], [("El", "DA")], []], dict()),
    ([[("Madrid", "NP"), ("en", "PREP")], [("El", "DA")]],
     dict(template="U00:%x[-1,0]/%x[0,1]\nU01:%x[2,0]\nB")),
])
def test_fit_transform_equals_fit_then_transform(X, params):
    """fit_transform numbers the keys template by template in a reused
    buffer; it must give what fit + transform (one whole key matrix) give,
    where no template is jackknifed."""
    a = SequenceFeaturizer(**params).fit_transform(X)
    b = SequenceFeaturizer(**params).fit(X).transform(X)
    assert a == b
    assert a.X.nnz > 0


@pytest.mark.parametrize("params", [
    dict(unit_offsets=(-3, -2, -1, 0, 1, 2, 3),
         ngram_offsets=((-3, -2), (-2, -1), (-1, 0), (0, 1), (1, 2), (2, 3), (-1, 1), (0, 2))),
    dict(template="U0:%x[-2,0]/%x[-1,0]/%x[0,0]\nU1:%x[-1,0]/%x[0,0]/%x[1,0]\n"
                  "U2:%x[0,0]/%x[1,0]/%x[2,0]\nU3:%x[3,0]"),
])
def test_windows_sharing_their_ngrams_equal_fit_then_transform(params):
    """fit_transform numbers the n-grams that shifted window templates share
    (C[-1]C[0], C[0]C[1], ...) once, padding included; on short sequences
    (offsets beyond both ends) it must give what fit + transform give."""
    rng = np.random.default_rng(5)
    X = ["".join(rng.choice(list("abc"), size=rng.integers(0, 6))) for _ in range(40)]
    f = SequenceFeaturizer(**params)
    a = f.fit_transform(X)
    b = f.transform(X)
    assert a == b and a.X.nnz > 0
    names = f.get_feature_names_out()
    assert len(set(names)) == names.size == f.n_features_out_


@pytest.mark.parametrize("folds", [1, 2, 3])
def test_dictionary_flags_equal_a_python_scan_of_every_match(folds):
    """Every match of every dictionary word (capped lengths, overlapping, not
    across sentences), jackknifed: with folds, a word counts in a sentence only
    if its text also occurs in a sentence of another fold."""
    from skcrf.feature_extraction._dictionary import DictionaryMatches
    from skcrf.feature_extraction._jackknife import jackknife_folds
    from skcrf.feature_extraction._units import read_units

    rng = np.random.default_rng(folds)
    texts = ["".join(rng.choice(list("abcd"), size=rng.integers(0, 12))) for _ in range(30)]
    words = sorted({"".join(rng.choice(list("abcd"), size=rng.integers(1, 6)))
                    for _ in range(25)})
    cap = 3
    tpl = DictionaryMatches(words, cap, folds=folds)
    units = read_units(texts)
    keys = np.zeros((units.n_tokens, tpl.n_slots), dtype=np.uint64)
    tpl.write_keys(units, None, None, keys, 0, fitting=True)
    got = keys != 0

    fold = jackknife_folds(len(texts), folds)
    want = np.zeros_like(got)
    for s, text in enumerate(texts):
        other = [t for t, g in zip(texts, fold) if g != fold[s]]
        t0 = units.offsets[s]
        for t in range(len(text)):
            for k in range(1, len(text) - t + 1):
                w = text[t:t + k]
                if w not in words or (folds > 1 and not any(w in o for o in other)):
                    continue
                kk = min(k, cap) - 1
                want[t0 + t, 3 * kk] = True
                want[t0 + t + k - 1, 3 * kk + 1] = True
                want[t0 + t + 1:t0 + t + k - 1, 3 * kk + 2] = True
    np.testing.assert_array_equal(got, want)
    assert got.any()


# ---------------------------------------------------------------- property
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_CHARS = list("上海天一2２aＡ，。年京") + ["𠀋"]


@st.composite
def _featurizer_problems(draw):
    texts = draw(st.lists(st.text(alphabet=_CHARS, max_size=7), min_size=1, max_size=8))
    offsets = st.integers(-3, 3)
    params = dict(
        unit_offsets=tuple(draw(st.lists(offsets, max_size=4, unique=True))),
        ngram_offsets=tuple(draw(st.lists(st.tuples(offsets, offsets), max_size=4,
                                          unique=True))),
        char_type_offsets=tuple(draw(st.lists(offsets, max_size=3, unique=True))),
        char_classes=draw(st.booleans()),
        bias=draw(st.booleans()),
        dictionary_folds=1,
    )
    if draw(st.booleans()):
        params["dictionary"] = draw(st.lists(st.text(alphabet=_CHARS, min_size=1, max_size=3),
                                             max_size=6))
    if draw(st.booleans()):
        params["accessor_variety"] = draw(st.integers(2, 4))
    return texts, params


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_featurizer_problems())
def test_fit_transform_equals_fit_then_transform_on_random_templates(problem):
    """fit_transform numbers features by several routes (coded slots, shared
    n-grams from dense ids, pairs by counting sort, hashed keys); whatever the
    templates and texts (empty ones, offsets past both ends, a character
    outside the BMP), the result must be what fit + transform give, with
    one readable name per column."""
    texts, params = problem
    f = SequenceFeaturizer(**params)
    a = f.fit_transform(texts)
    assert a == SequenceFeaturizer(**params).fit(texts).transform(texts)
    names = f.get_feature_names_out()
    assert len(set(names)) == names.size == f.n_features_out_ == a.n_features
