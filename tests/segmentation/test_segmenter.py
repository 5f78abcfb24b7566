"""WordSegmenter, the six-tag set, and the word-segmentation features."""

import pickle

import pytest
from sklearn.model_selection import GridSearchCV, KFold

import skcrf.io._model_file as model_file
from skcrf import WordSegmenter, allowed_transitions
from skcrf.datasets import load_sample_cws
from skcrf.metrics import segmentation_scores
from skcrf.segmentation import (
    adopt_new_words,
    merge_runs,
    tags_to_words,
    word_start_proba,
    words_to_tags,
)


@pytest.fixture(scope="module")
def sample():
    sents = load_sample_cws()
    return sents[:300], sents[300:360]


@pytest.fixture(scope="module")
def segmenter(sample):
    train, _ = sample
    return WordSegmenter(max_iter=60).fit(["".join(s) for s in train], train)


def test_six_tags_round_trip_and_constraints():
    words = ["上", "上海", "上海市", "中华人民", "中华人民共和国"]
    tags = words_to_tags(words, "BB2B3MES")
    assert tags == ["S", "B", "E", "B", "B2", "E", "B", "B2", "B3", "E",
                    "B", "B2", "B3", "M", "M", "M", "E"]
    assert tags_to_words("".join(words), tags) == words
    pairs = set(allowed_transitions("BB2B3MES", ["B", "B2", "B3", "E", "M", "S"]))
    assert ("B", "B2") in pairs and ("B", "E") in pairs and ("B", "B3") not in pairs
    assert ("B2", "M") not in pairs and ("B3", "M") in pairs and ("M", "B2") not in pairs
    assert ("<start>", "B") in pairs and ("<start>", "B2") not in pairs
    assert ("E", "<end>") in pairs and ("M", "<end>") not in pairs
    # every tag sequence of real words is allowed
    ok = [(a, b) for a, b in zip(["<start>"] + tags, tags + ["<end>"])]
    assert set(ok) <= pairs


def test_fit_predict_score(sample, segmenter):
    _, test = sample
    X = ["".join(s) for s in test]
    pred = segmenter.predict(X)
    assert ["".join(p) for p in pred] == X
    f1 = segmenter.score(X, test)
    assert f1 == pytest.approx(segmentation_scores(test, pred)["f1"])
    assert f1 > 0.75
    assert segmenter.crf_.constraints == "BB2B3MES"
    assert set(segmenter.crf_.classes_) == {"B", "B2", "B3", "E", "M", "S"}


def test_pickle_and_search(sample, segmenter):
    train, test = sample
    X = ["".join(s) for s in test]
    again = pickle.loads(pickle.dumps(segmenter))
    assert again.predict(X) == segmenter.predict(X)
    search = GridSearchCV(WordSegmenter(max_iter=20, accessor_variety=None),
                          {"c2": [0.3, 3.0]}, cv=KFold(2)).fit(
        ["".join(s) for s in train[:100]], train[:100])
    assert search.best_params_["c2"] in (0.3, 3.0)


def test_whitespace_empty_and_unusual_input(segmenter):
    out = segmenter.predict(["", "上海 北京", "😀上海"])
    assert out[0] == []
    assert "".join(out[1]) == "上海北京" and all(" " not in w for w in out[1])
    assert "".join(out[2]) == "😀上海"
    # digit and Latin runs are never split
    assert merge_runs(["20", "08", "年", "i", "Phone", "，"]) == ["2008", "年", "iPhone", "，"]
    for words in segmenter.predict(["2008年他买了iPhone手机，花了3999元"]):
        assert "2008" in "".join(w for w in words if "2008" in w)
        assert any("iPhone" in w for w in words) and any("3999" in w for w in words)


def test_bad_training_input_is_refused():
    seg = WordSegmenter(max_iter=5)
    with pytest.raises(ValueError, match=r"y\[0\] does not spell X\[0\]"):
        seg.fit(["上海"], [["上", "山"]])
    with pytest.raises(ValueError, match=r"X\[1\] has whitespace at position 1"):
        seg.fit(["上海", "北 京"], [["上海"], ["北", "京"]])
    with pytest.raises(ValueError, match=r"y\[0\]: words\[1\] is an empty word"):
        seg.fit(["上海"], [["上海", ""]])
    with pytest.raises(TypeError, match=r"X\[0\] is a list"):
        seg.fit([["上海"]], [["上海"]])
    with pytest.raises(ValueError, match="dictionary is empty"):
        WordSegmenter(dictionary=[]).fit(["上海"], [["上海"]])
    with pytest.raises(ValueError, match="y must be a list of 2 word lists"):
        seg.fit(["上海", "北京"], [["上海"]])


def test_dictionary_words_are_lexicalised_and_jackknifed():
    from skcrf.feature_extraction._dictionary import DictionaryWords
    from skcrf.feature_extraction._template_set import TemplateSet
    from skcrf.feature_extraction._units import read_units

    units = read_units(["上海市", "上海", "北京"])
    ts = TemplateSet([DictionaryWords(["上海", "北京", "海市"], max_len=3, folds=3)])
    fit_keys, keys = ts.keys(units, fitting=True), ts.keys(units)
    # slots: begin2, end2, begin3, end3; 上海 starts at 0 and ends at 1
    assert keys[0, 0] != 0 and keys[1, 1] != 0 and keys[1, 0] != 0   # 海市 begins at 1
    assert keys[0, 0] == keys[3, 0]            # the same word, the same feature
    # jackknifed (3 folds, one sentence each): 北京 and 海市 occur in one fold only
    assert fit_keys[5, 0] == 0 and fit_keys[6, 1] == 0 and fit_keys[1, 0] == 0
    assert fit_keys[0, 0] == keys[0, 0]        # 上海 occurs in two folds


def test_user_dictionary_and_no_dictionary(sample):
    train, test = sample
    X = ["".join(s) for s in train[:150]]
    external = WordSegmenter(dictionary=["上海", "北京", "中国"], max_iter=20).fit(X, train[:150])
    none = WordSegmenter(dictionary=None, accessor_variety=None, char_classes=False,
                         max_iter=20).fit(X, train[:150])
    for seg in (external, none):
        assert ["".join(p) for p in seg.predict(["".join(s) for s in test[:5]])] == \
            ["".join(s) for s in test[:5]]
    assert not any(n.startswith(("w_", "dict")) for n in none.featurizer_.get_feature_names_out())


def test_accessor_variety_folds_auto(sample, segmenter):
    # without unlabeled text the statistics are jackknifed; with it (the text to
    # segment, which counts its own contexts) the training text counts its own too
    train, test = sample
    assert segmenter.featurizer_.accessor_variety_folds == 10
    X = ["".join(s) for s in train[:60]]
    seg = WordSegmenter(max_iter=5, unlabeled_text=["".join(s) for s in test]).fit(X, train[:60])
    assert seg.featurizer_.accessor_variety_folds == 1
    seg = WordSegmenter(max_iter=5, accessor_variety_folds=3).fit(X, train[:60])
    assert seg.featurizer_.accessor_variety_folds == 3


def test_adjacent_pmi_auto(sample, segmenter):
    # on with unlabeled text only (where it paid on the tuning split)
    train, test = sample
    assert not segmenter.featurizer_.adjacent_pmi
    assert not any(n.startswith("pmi_") for n in segmenter.featurizer_.get_feature_names_out())
    X = ["".join(s) for s in train[:60]]
    seg = WordSegmenter(max_iter=5, unlabeled_text=["".join(s) for s in test]).fit(X, train[:60])
    assert seg.featurizer_.adjacent_pmi
    assert any(n.startswith("pmi_before=") for n in seg.featurizer_.get_feature_names_out())
    seg = WordSegmenter(max_iter=5, adjacent_pmi=True).fit(X, train[:60])
    assert seg.featurizer_.adjacent_pmi


def test_oov_model_adopts_the_character_models_new_words(sample, segmenter):
    train, test = sample
    X = ["".join(s) for s in test]
    main, oov = segmenter.crf_, segmenter.oov_crf_
    assert oov is not None and oov.constraints == "BB2B3MES"
    names = segmenter.oov_featurizer_.get_feature_names_out()
    assert not any(n.startswith(("w_", "dict", "av", "pmi_")) for n in names)
    # predict = the main model's words, the character model's new words
    # adopted where the main model is unsure, then digit / Latin runs merged
    S = segmenter.featurizer_.transform(X)
    words = [tags_to_words(x, t) for x, t in zip(X, main.predict(S))]
    props = [tags_to_words(x, t) for x, t in
             zip(X, oov.predict(segmenter.oov_featurizer_.transform(X)))]
    marg = main.predict_marginals(S)
    expect = [merge_runs(adopt_new_words(w, p, segmenter.train_words_,
                                         word_start_proba(m, list(main.classes_)), 0.8))
              for w, p, m in zip(words, props, marg)]
    assert segmenter.predict(X) == expect
    assert expect != [merge_runs(w) for w in words]     # the sample has such words
    # off: the main model alone; and no second model without dictionary or statistics
    plain = WordSegmenter(max_iter=60, oov_model=False).fit(["".join(s) for s in train], train)
    assert plain.oov_crf_ is None
    assert plain.predict(X) == [merge_runs(w) for w in words]
    bare = WordSegmenter(max_iter=5, dictionary=None, accessor_variety=None).fit(
        ["".join(s) for s in train[:50]], train[:50])
    assert bare.oov_crf_ is None and bare.oov_featurizer_ is None
    # "auto": off with unlabeled text (the main model's statistics then cover it)
    with_text = WordSegmenter(max_iter=5, unlabeled_text=X).fit(
        ["".join(s) for s in train[:50]], train[:50])
    assert with_text.oov_crf_ is None
    forced = WordSegmenter(max_iter=5, unlabeled_text=X, oov_model=True).fit(
        ["".join(s) for s in train[:50]], train[:50])
    assert forced.oov_crf_ is not None


def test_oov_model_never_proposes_dictionary_words(sample):
    train, _ = sample
    X = ["".join(s) for s in train[:80]]
    seg = WordSegmenter(max_iter=10, dictionary=["浦东新区"]).fit(X, train[:80])
    assert "浦东新区" in seg.known_words_ and seg.train_words_ < seg.known_words_


def test_model_file_keeps_the_oov_model(sample, segmenter, tmp_path, monkeypatch):
    from skcrf.exceptions import ModelFileError
    from skcrf.io._estimators import load_model, save_model
    from skcrf.io._model import read_model

    _, test = sample
    X = ["".join(s) for s in test] + ["上海 北京", ""]
    expect = segmenter.predict(X)
    path = save_model(segmenter, tmp_path / "seg.skcrf")
    model = read_model(path)
    assert model.meta["format_version"] == 2 and model.oov is not None
    assert model.known_words == segmenter.known_words_
    assert model.segment(X) == expect
    loaded = load_model(path)
    assert loaded.oov_crf_ is not None and loaded.predict(X) == expect
    # a reader of format 1 would segment without the OOV model: it must refuse
    monkeypatch.setattr(model_file, "FORMAT_VERSION", 1)
    with pytest.raises(ModelFileError, match="newer"):
        read_model(path)
    monkeypatch.undo()
    # without an OOV model the file stays at version 1
    plain = WordSegmenter(max_iter=5, oov_model=False).fit(X[:20], test[:20])
    assert read_model(save_model(plain, tmp_path / "plain.skcrf")).meta["format_version"] == 1


def test_no_grapheme_cluster_is_ever_split(segmenter, tmp_path):
    from skcrf import save_model
    from skcrf.io import read_model

    texts = ["我们👩\u200d💻在北京工作", "你好👍🏽朋友", "中国🇨🇳和美国🇺🇸", "café和e\u0301",
             "︎好\ufe0f的", "👨\u200d👩\u200d👧\u200d👦一家人在上海"]
    clusters = ["👩\u200d💻", "👍🏽", "🇨🇳", "🇺🇸", "e\u0301", "好\ufe0f",
                "👨\u200d👩\u200d👧\u200d👦"]
    save_model(segmenter, tmp_path / "seg.skcrf")
    for words in segmenter.predict(texts) + read_model(tmp_path / "seg.skcrf").segment(texts):
        text = "".join(words)
        cuts, pos = set(), 0
        for w in words[:-1]:
            pos += len(w)
            cuts.add(pos)
        for c in clusters:
            start = text.find(c)
            if start >= 0:
                assert not cuts & set(range(start + 1, start + len(c))), (words, c)
