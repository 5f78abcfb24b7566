"""Model files: files written by earlier versions load unchanged, parameters
survive a round trip, and loading sets nothing a file may not name."""

import json
import os
import pathlib
import zipfile

import numpy as np
import pytest

from skcrf import LinearChainCRF, SequenceFeaturizer, WordSegmenter, load_model, save_model
from skcrf.datasets import load_sample_cws
from skcrf.exceptions import ModelFileError
from skcrf.io import read_model
from tests.probes import SIGNATURES

DATA = pathlib.Path(__file__).parent / "data"
EXPECTED = json.loads((DATA / "expected_v0.1.0.json").read_text(encoding="utf-8"))


def _tokens(sents):
    return [[(w, "N" if len(w) > 1 else "V") for w in s] for s in sents]


@pytest.fixture(scope="module")
def test_text():
    sents = load_sample_cws()[900:912]
    return ["".join(s) for s in sents], _tokens(sents)


# ------------------------------------------------- files of skcrf 0.1.0
@pytest.mark.parametrize("name", ["segmenter", "tagger", "crfpp", "chars"])
def test_files_written_by_version_0_1_0_predict_as_they_did(name, test_text):
    chars, tokens = test_text
    X = chars if name in ("segmenter", "chars") else tokens
    loaded = load_model(DATA / f"{name}_v0.1.0.skcrf")
    assert loaded.predict(X) == EXPECTED[name]
    model = read_model(DATA / f"{name}_v0.1.0.skcrf")
    got = model.segment(X) if name == "segmenter" else model.predict(X)
    assert got == EXPECTED[name]


@pytest.mark.parametrize("name", ["tagger", "crfpp", "chars"])
def test_files_written_by_version_0_1_0_name_their_features_as_they_did(name):
    names = load_model(DATA / f"{name}_v0.1.0.skcrf")[0].get_feature_names_out().tolist()
    assert names[:100] + names[-100:] == EXPECTED[f"{name}_names"]


def test_marginals_of_a_version_0_1_0_file(test_text):
    pipe = load_model(DATA / "tagger_v0.1.0.skcrf")
    got = pipe[-1].predict_marginals(pipe[0].transform(test_text[1][:2]))
    for g, want in zip(got, EXPECTED["tagger_marginals"]):
        np.testing.assert_allclose(g, want, atol=1e-9)


def test_a_resaved_old_file_loads_the_same(tmp_path, test_text):
    seg = load_model(DATA / "segmenter_v0.1.0.skcrf")
    save_model(seg, tmp_path / "again.skcrf")
    assert load_model(tmp_path / "again.skcrf").predict(test_text[0]) == EXPECTED["segmenter"]


# --------------------------------------------------------- round trips
@pytest.fixture(scope="module")
def small():
    sents = load_sample_cws()[:40]
    return ["".join(s) for s in sents], sents


def test_none_parameters_survive_a_round_trip(small, tmp_path):
    X, y = small
    seg = WordSegmenter(accessor_variety=None, dictionary=None, max_iter=5).fit(X, y)
    save_model(seg, tmp_path / "seg.skcrf")
    loaded = load_model(tmp_path / "seg.skcrf")
    assert loaded.accessor_variety is None and loaded.dictionary is None
    assert loaded.get_params() == seg.get_params()


def test_data_parameters_are_not_stored(small, tmp_path):
    X, y = small
    seg = WordSegmenter(unlabeled_text=X[:5] * 50, max_iter=5).fit(X, y)
    save_model(seg, tmp_path / "seg.skcrf")
    meta = read_model(tmp_path / "seg.skcrf").meta
    assert "unlabeled_text" not in meta["segmenter"]
    assert "unlabeled_text" not in meta["featurizer"]["params"]
    assert "dictionary" not in meta["featurizer"]["params"]
    assert len(json.dumps(meta)) < 10 * len(json.dumps(meta["featurizer"]["strings"])) + 4096
    loaded = load_model(tmp_path / "seg.skcrf")
    assert loaded.unlabeled_text is None     # set it again before refitting
    assert loaded.predict(X[:5]) == seg.predict(X[:5])


def test_tuple_parameters_come_back_as_tuples(small, tmp_path):
    X, y = small
    from skcrf.segmentation import words_to_tags

    pipe = (SequenceFeaturizer(unit_offsets=(-1, 0, 1), ngram_offsets=((0, 1),)),
            LinearChainCRF(max_iter=5, constraints=[("B", "M"), ("B", "E"), ("M", "M"), ("M", "E"),
                                                  ("E", "B"), ("E", "S"), ("S", "B"), ("S", "S")]))
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(*pipe).fit(X, [words_to_tags(s) for s in y])
    save_model(pipe, tmp_path / "m.skcrf")
    loaded = load_model(tmp_path / "m.skcrf")
    assert loaded[0].unit_offsets == (-1, 0, 1)
    assert loaded[0].ngram_offsets == ((0, 1),)
    assert loaded.predict(X[:3]) == pipe.predict(X[:3])


def test_model_files_are_created_with_the_umask(small, tmp_path):
    X, y = small
    from sklearn.pipeline import make_pipeline

    from skcrf.segmentation import words_to_tags

    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(max_iter=3))
    pipe.fit(X[:10], [words_to_tags(s) for s in y[:10]])
    old = os.umask(0o022)
    try:
        save_model(pipe, tmp_path / "m.skcrf")
    finally:
        os.umask(old)
    assert (tmp_path / "m.skcrf").stat().st_mode & 0o777 == 0o644
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".skcrf-")]


# --------------------------------------------------- what loading sets
def _rewrite(src, dst, edit_meta=None, edit_arrays=None):
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays.pop("__meta__").tobytes().decode("utf-8"))
    if edit_meta:
        edit_meta(meta)
    if edit_arrays:
        edit_arrays(arrays)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    np.savez(dst, **arrays)
    return dst


def test_a_file_cannot_set_attributes_beyond_the_allow_list(tmp_path, test_text):
    def evil(meta):
        meta["crf"]["fitted"].update({"predict": 1, "__class__": "x", "classes_": ["X"]})

    path = _rewrite(DATA / "tagger_v0.1.0.skcrf", tmp_path / "evil.skcrf", evil)
    try:
        pipe = load_model(path)
    except ModelFileError as exc:
        assert "evil.skcrf" in str(exc)
        return
    crf = pipe[-1]
    assert type(crf) is LinearChainCRF and callable(crf.predict)
    assert crf.classes_.tolist() != ["X"]
    assert pipe.predict(test_text[1]) == EXPECTED["tagger"]


@pytest.mark.parametrize("kind, value", [("type", "os.system"), ("type", "Template"),
                                         ("padding", "system"), ("padding", "__init__")])
def test_templates_and_paddings_come_from_allow_lists(tmp_path, kind, value):
    def edit(meta):
        meta["featurizer"]["templates"][0][kind] = value

    path = _rewrite(DATA / "crfpp_v0.1.0.skcrf", tmp_path / "bad.skcrf", edit)
    with pytest.raises(ModelFileError, match="bad.skcrf"):
        read_model(path)


def test_a_model_file_is_a_zip_of_arrays_and_json():
    with zipfile.ZipFile(DATA / "tagger_v0.1.0.skcrf") as z:
        names = z.namelist()
        assert all(n.endswith(".npy") for n in names)
        header = z.read("__meta__.npy")[:6]
    assert header == b"\x93NUMPY"
    meta = read_model(DATA / "tagger_v0.1.0.skcrf").meta
    assert meta["format"] == "skcrf-model" and meta["kind"] == "tagger"


def test_model_files_get_the_usual_permissions(tmp_path):
    # 0666 less the umask, as other tools' files (CRF++'s: 0644), not the
    # temporary file's private 0600
    import os
    import stat

    from sklearn.pipeline import make_pipeline

    import skcrf
    from skcrf import LinearChainCRF, SequenceFeaturizer

    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(max_iter=3)).fit(
        ["上海浦东", "开发"], [["B", "E", "B", "E"], ["B", "E"]])
    old = os.umask(0o022)
    try:
        path = skcrf.save_model(pipe, tmp_path / "m.skcrf")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


# ------------------------------------------ the first predict after loading
_FIRST_PREDICT = SIGNATURES + r'''
import json, sys
from skcrf import load_model
from skcrf.datasets import load_sample_cws

sents = load_sample_cws()[900:912]
X = {"tagger": [[(w, "N" if len(w) > 1 else "V") for w in s] for s in sents],
     "chars": ["".join(s) for s in sents]}[sys.argv[2]]
featurizer, crf = load_model(sys.argv[1])
Z = featurizer.transform(X)
before = signatures()
crf.predict(Z)
print(json.dumps({k: sorted(v - before.get(k, set())) for k, v in signatures().items()
                  if v - before.get(k, set())}))
'''


@pytest.mark.parametrize("name", ["tagger", "chars"])
def test_load_model_loads_the_kernels_of_the_first_predict(name):
    # in a new process (this one has loaded every kernel already): load_model
    # loads what predict runs, so its first call adds no kernel signature
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", _FIRST_PREDICT,
                          str(DATA / f"{name}_v0.1.0.skcrf"), name],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1]) == {}
