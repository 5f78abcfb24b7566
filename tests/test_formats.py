"""skcrf.load_model / save_model on every format: CRFsuite model files written
by CRFsuite itself load and tag as CRFsuite does; models written by skcrf in
CRFsuite's format are opened by CRFsuite and tag identically; the command
line tags and dumps them; malformed files are clear errors."""

import pickle

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

import skcrf
from skcrf import LinearChainCRF, ModelFileError, SequenceDictVectorizer
from skcrf.cli import main
from skcrf.compat import CRF
from tests.oracles.problems import synthetic_ner, token_features

theirs = pytest.importorskip("pycrfsuite", reason="python-crfsuite is part of the [test] extra")


@pytest.fixture(scope="module")
def data():
    sents, tags = synthetic_ner(220, seed=11)
    X = [[token_features(s, t) for t in range(len(s))] for s in sents]
    return X[:160], tags[:160], X[160:], tags[160:]


@pytest.fixture(scope="module")
def crfsuite_file(data, tmp_path_factory):
    """A model written by CRFsuite (python-crfsuite's Trainer)."""
    X, y, _, _ = data
    path = tmp_path_factory.mktemp("formats") / "model.crfsuite"
    trainer = theirs.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.set_params({"c1": 0.0, "c2": 0.1, "max_iterations": 80})
    trainer.train(str(path))
    return path


def _their_tagger(path):
    tagger = theirs.Tagger()
    tagger.open(str(path))
    return tagger


def test_load_model_reads_a_crfsuite_file_and_tags_as_crfsuite(data, crfsuite_file):
    _, _, Xte, _ = data
    model = skcrf.load_model(crfsuite_file)
    assert isinstance(model, CRF)
    ref = _their_tagger(crfsuite_file)
    pred = model.predict(Xte)
    marg = model.predict_marginals(Xte)
    for xseq, labels, m in zip(Xte, pred, marg):
        assert list(labels) == ref.tag(xseq)
        for t in range(len(xseq)):
            for lab in ref.labels():
                assert m[t][lab] == pytest.approx(ref.marginal(lab, t), abs=1e-9)
    info = ref.info()
    assert model.transition_features_ == pytest.approx(info.transitions)
    assert model.state_features_ == pytest.approx(info.state_features)
    assert model.classes_ == ref.labels()
    best = model.predict_topk(Xte[:3], k=2)
    assert [b[0][0] for b in best] == [ref.tag(x) for x in Xte[:3]]


def test_a_loaded_crfsuite_model_pickles_and_refits_without_touching_the_file(
        data, crfsuite_file, tmp_path):
    X, y, Xte, _ = data
    before = crfsuite_file.read_bytes()
    model = skcrf.load_model(crfsuite_file)
    again = pickle.loads(pickle.dumps(model))
    assert [list(p) for p in again.predict(Xte)] == [list(p) for p in model.predict(Xte)]
    model.set_params(max_iterations=5).fit(X[:20], y[:20])
    assert crfsuite_file.read_bytes() == before


@pytest.mark.parametrize("kind", ["pipeline", "compat"])
def test_save_model_in_crfsuites_format_is_opened_by_crfsuite(data, tmp_path, kind):
    X, y, Xte, _ = data
    if kind == "pipeline":
        est = make_pipeline(SequenceDictVectorizer(),
                            LinearChainCRF(c2=0.1, start_end_transitions=False,
                                           all_possible_transitions=False)).fit(X, y)
    else:
        est = CRF(c2=0.1, max_iterations=50).fit(X, y)
    path = tmp_path / "skcrf.crfsuite"
    assert skcrf.save_model(est, path, format="crfsuite") == path
    ref = _their_tagger(path)
    ours = [list(p) for p in est.predict(Xte)]
    assert [ref.tag(x) for x in Xte] == ours
    # and it loads back to the same predictions
    assert [list(p) for p in skcrf.load_model(path).predict(Xte)] == ours


def test_save_model_refuses_what_crfsuite_cannot_hold(data, tmp_path):
    X, y, _, _ = data
    with_ends = make_pipeline(SequenceDictVectorizer(),
                              LinearChainCRF(max_iter=5)).fit(X[:30], y[:30])
    with pytest.raises(ValueError, match="start / end"):
        skcrf.save_model(with_ends, tmp_path / "m", format="crfsuite")
    with pytest.raises(TypeError, match="format='crfsuite'"):
        skcrf.save_model(LinearChainCRF(), tmp_path / "m", format="crfsuite")
    with pytest.raises(ValueError, match="format must be one of"):
        skcrf.save_model(with_ends, tmp_path / "m", format="crf++")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("cut", [4, 48, 200, -30])
def test_truncated_crfsuite_files_name_the_file(crfsuite_file, tmp_path, cut):
    bad = tmp_path / "cut.crfsuite"
    bad.write_bytes(crfsuite_file.read_bytes()[:cut])
    with pytest.raises(ModelFileError, match="cut.crfsuite"):
        skcrf.load_model(bad)


def test_foreign_files_are_clear_errors(tmp_path):
    crfpp = tmp_path / "model.crfpp"
    crfpp.write_bytes(b"version: 100\ncost-factor: 1\n")
    with pytest.raises(ModelFileError, match="CRF\\+\\+ model"):
        skcrf.load_model(crfpp)
    other = tmp_path / "notes.txt"
    other.write_bytes(b"hello")
    with pytest.raises(ModelFileError, match="notes.txt"):
        skcrf.load_model(other)
    with pytest.raises(ModelFileError, match="no such model file"):
        skcrf.load_model(tmp_path / "missing")


def _crfsuite_lines(X, y):
    def esc(name):
        return name.replace("\\", "\\\\").replace(":", "\\:")

    lines = []
    for xseq, yseq in zip(X, y):
        for item, lab in zip(xseq, yseq):
            attrs = []
            for k, v in item.items():
                if isinstance(v, str):
                    attrs.append(esc(f"{k}:{v}"))
                elif isinstance(v, bool):
                    attrs.append(f"{esc(k)}:{float(v)}")
                else:
                    attrs.append(f"{esc(k)}:{v!r}")
            lines.append("\t".join([lab] + attrs))
        lines.append("")
    return "\n".join(lines) + "\n"


def test_command_line_tags_and_dumps_crfsuite_models(data, crfsuite_file, tmp_path, capsys):
    _, _, Xte, yte = data
    inp = tmp_path / "test.txt"
    inp.write_text(_crfsuite_lines(Xte, yte), encoding="utf-8")
    assert main(["tag", "-m", str(crfsuite_file), str(inp)]) == 0
    out = capsys.readouterr().out
    ref = _their_tagger(crfsuite_file)
    blocks = [b for b in out.strip("\n").split("\n\n")]
    assert len(blocks) == len(Xte)
    for block, xseq, yseq in zip(blocks, Xte, yte):
        rows = [line.split("\t") for line in block.split("\n")]
        assert [r[0] for r in rows] == list(yseq)
        assert [r[1] for r in rows] == ref.tag(xseq)
    # the output is what skcrf eval scores
    tagged = tmp_path / "tagged.txt"
    tagged.write_text(out, encoding="utf-8")
    assert main(["eval", str(tagged)]) == 0
    assert "accuracy" in capsys.readouterr().out.lower()
    assert main(["dump", "-m", str(crfsuite_file)]) == 0
    dump = capsys.readouterr().out
    assert dump.startswith("FILEHEADER = {")
    assert "TRANSITIONS = {" in dump and "STATE_FEATURES = {" in dump


def test_numbers_and_escapes_in_crfsuite_data(tmp_path, capsys):
    from skcrf.cli._crfsuite import _attribute
    from skcrf.cli._io import UserError

    assert _attribute("w\\:a", "f", 1) == ("w:a", 1.0)
    assert _attribute("len:2.5", "f", 1) == ("len", 2.5)
    assert _attribute("a\\\\b:3", "f", 1) == ("a\\b", 3.0)
    with pytest.raises(UserError, match="f:7"):
        _attribute("x:abc", "f", 7)
    with pytest.raises(UserError, match="not finite"):
        _attribute("x:nan", "f", 7)


def test_skcrf_files_still_load(tmp_path):
    from skcrf import SequenceFeaturizer

    X = ["上海浦东", "开发"]
    y = [["B", "E", "B", "E"], ["B", "E"]]
    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(max_iter=5)).fit(X, y)
    path = skcrf.save_model(pipe, tmp_path / "m.skcrf")
    assert skcrf.load_model(path).predict(X) == pipe.predict(X)
    assert np.asarray(skcrf.load_model(path)[-1].coef_).shape == pipe[-1].coef_.shape


def test_a_crfsuite_file_asking_for_huge_dense_weights_is_refused(tmp_path):
    # many labels and attributes, one feature: a small file whose dense
    # weights would take gigabytes
    from skcrf.io._crfsuite import write_crfsuite

    labels = [f"L{i}" for i in range(20_000)]
    attrs = [f"a{i}" for i in range(20_000)]
    data = write_crfsuite(labels, attrs, (np.array([0]), np.array([0]), np.array([1.0])),
                          (np.array([0]), np.array([1]), np.array([0.5])))
    path = tmp_path / "huge.crfsuite"
    path.write_bytes(data)
    assert len(data) < 10 * 2**20
    with pytest.raises(ModelFileError, match="huge.crfsuite.*dense weights"):
        skcrf.load_model(path)
