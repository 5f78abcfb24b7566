"""Template objects: any number of units, any offsets, any columns."""

import numpy as np

from skcrf._templates import TemplateSet, Window
from skcrf._units import read_units


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
