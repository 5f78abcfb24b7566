"""Template objects: any number of units, any offsets, any columns."""

import numpy as np

from skcrf.feature_extraction._template_set import TemplateSet
from skcrf.feature_extraction._templates import Window
from skcrf.feature_extraction._units import read_units


def test_three_unit_template_across_columns_matches_hand_expansion():
    # CRF++'s U:%x[-1,0]/%x[0,1]/%x[1,0]
    sents = [[("the", "DT"), ("cat", "NN"), ("sat", "VBD")], [("a", "DT")]]
    tpl = Window([(("col", 0), -1), (("col", 1), 0), (("col", 0), 1)],
                 ["U:", 0, "/", 1, "/", 2])
    ts = TemplateSet([tpl])
    units = read_units(sents)
    keys = ts.keys(units)
    assert keys.shape == (4, 1) and (keys != 0).all()
    rows = np.arange(4)
    codes, strings = ts.unit_codes(units, rows, np.zeros(4, dtype=np.int64))
    names = ts.names(np.zeros(4, dtype=np.int64), codes, strings)
    assert names == ["U:<s-1>/DT/cat", "U:the/NN/sat", "U:cat/VBD/</s+1>",
                     "U:<s-1>/DT/</s+1>"]
    # equal expansions give equal keys, in another Units object too
    again = ts.keys(read_units([[("the", "DT"), ("dog", "NN"), ("sat", "VBD")]]))
    assert again[1, 0] == keys[1, 0] and again[0, 0] != keys[0, 0]


def test_template_keys_do_not_depend_on_the_other_templates():
    units = read_units(["上海市"])
    a = Window([(("col", 0), 0)], ["C[0]=", 0])
    b = Window([(("type",), 1)], ["T[1]=", 0])
    alone = TemplateSet([a]).keys(units)
    together = TemplateSet([b, a]).keys(units)
    np.testing.assert_array_equal(alone[:, 0], together[:, 1])


def test_fitted_featurizer_keeps_only_the_strings_of_kept_features():
    import pickle

    from skcrf import SequenceFeaturizer

    X = [["common", "rareword"], ["common", "common"]]
    f = SequenceFeaturizer(min_freq=2, word_shape=False).fit(X)
    names = f.get_feature_names_out()
    assert "C[0]=common" in names and not any("rareword" in n for n in names)
    assert b"rareword" not in pickle.dumps(f)


def test_direct_and_hashed_unit_numbering_agree():
    """unit_codes numbers small ids through a direct-mapped array and any
    other ids through a hash table: the same codes and order either way,
    padding ids and absent parts handled alike."""
    from skcrf.feature_extraction import _window_keys as fh

    rng = np.random.default_rng(0)
    pad, absent, base = np.int64(1 << 40), np.int64(-5), np.int64(3)
    ids = rng.integers(0, 50, size=(400, 3)).astype(np.int64)
    ids[rng.random(ids.shape) < 0.1] = pad + 2
    ids[rng.random(ids.shape) < 0.05] = absent
    src_of = rng.integers(-1, 4, size=ids.shape).astype(np.int64)
    a = np.zeros(ids.shape, dtype=np.int64)
    b = np.zeros(ids.shape, dtype=np.int64)
    ua = fh._direct_unit_codes(ids, src_of, pad, absent, base, a)
    ub = fh._hashed_unit_codes(ids, src_of, pad, absent, base, b)
    assert ua is not None
    np.testing.assert_array_equal(a, b)
    for x, y in zip(ua, ub):
        np.testing.assert_array_equal(x, y)
    assert ua[0].size == len({(s, i) for s, i in zip(src_of.ravel(), ids.ravel())
                              if s >= 0 and 0 <= i < 50})
    # an id out of the direct range: the direct path declines, unit_codes hashes
    ids[0, 0], src_of[0, 0] = fh._DIRECT_IDS + 7, 0
    assert fh._direct_unit_codes(ids, src_of, pad, absent, base, a) is None
    c = np.zeros(ids.shape, dtype=np.int64)
    uc = fh.unit_codes(ids, src_of, pad, absent, base, c)
    assert c[0, 0] == base and uc[1][0] == fh._DIRECT_IDS + 7
