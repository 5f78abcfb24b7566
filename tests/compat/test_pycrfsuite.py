"""skcrf.compat.pycrfsuite against python-crfsuite itself: the same model
files, the same tags, probabilities and marginals, the same training log."""

import pytest

from skcrf.compat import pycrfsuite as ours
from tests.oracles.problems import synthetic_ner, token_features

theirs = pytest.importorskip("pycrfsuite", reason="python-crfsuite is part of the [test] extra")


@pytest.fixture(scope="module")
def data():
    sents, tags = synthetic_ner(200, seed=4)
    X = [[token_features(s, t) for t in range(len(s))] for s in sents]
    return X, tags


@pytest.fixture(scope="module")
def crfsuite_file(data, tmp_path_factory):
    """A model file written by CRFsuite itself (L1 + L2, so some weights are 0)."""
    X, y = data
    path = tmp_path_factory.mktemp("crfsuite") / "model.crfsuite"
    trainer = theirs.Trainer(verbose=False)
    for xseq, yseq in zip(X[:150], y[:150]):
        trainer.append(xseq, yseq)
    trainer.set_params({"c1": 0.05, "c2": 0.01, "max_iterations": 60})
    trainer.train(str(path))
    return path


def test_tagger_reads_crfsuites_file_and_tags_as_crfsuite(data, crfsuite_file):
    X, _ = data
    ref, tagger = theirs.Tagger(), ours.Tagger()
    ref.open(str(crfsuite_file))
    with tagger.open(str(crfsuite_file)):
        assert tagger.labels() == ref.labels()
        for xseq in X[150:]:
            assert tagger.tag(xseq) == ref.tag(xseq)
            ref.set(xseq)
            path = ref.tag()
            assert tagger.probability(path) == pytest.approx(ref.probability(path), rel=1e-9)
            other = [ref.labels()[0]] * len(xseq)
            assert tagger.probability(other) == pytest.approx(ref.probability(other),
                                                              rel=1e-9, abs=1e-300)
            for lab in ref.labels():
                for t in (0, len(xseq) - 1):
                    assert tagger.marginal(lab, t) == pytest.approx(ref.marginal(lab, t),
                                                                    abs=1e-12)
        # what the dump says: python-crfsuite's parser reads ours as it reads its own
        mine, theirs_info = tagger.info(), ref.info()
        assert mine.header == theirs_info.header
        assert mine.labels == theirs_info.labels
        assert mine.attributes == theirs_info.attributes
        assert mine.transitions == pytest.approx(theirs_info.transitions)
        assert mine.state_features == pytest.approx(theirs_info.state_features)
    with pytest.raises(ValueError, match="no model is open"):
        tagger.tag(X[0])


def test_model_file_round_trips_byte_for_byte(crfsuite_file):
    from skcrf.compat._crfsuite_model import CRFsuiteModel

    data = crfsuite_file.read_bytes()
    assert CRFsuiteModel.from_bytes(data).to_bytes() == data


def test_trainer_writes_files_crfsuite_reads(data, tmp_path):
    """Trained here, tagged by CRFsuite: the same tags as our own Tagger, and
    the optimum of the same objective as CRFsuite's (convex: same loss)."""
    X, y = data
    path = tmp_path / "ours.crfsuite"
    trainer = ours.Trainer(verbose=False)
    ref_trainer = theirs.Trainer(verbose=False)
    params = {"c1": 0.0, "c2": 0.1, "max_iterations": 500, "epsilon": 1e-7, "delta": 1e-7}
    for t in (trainer, ref_trainer):
        for xseq, yseq in zip(X[:150], y[:150]):
            t.append(xseq, yseq)
        t.set_params(params)
    trainer.train(str(path))
    ref_trainer.train(str(tmp_path / "theirs.crfsuite"))
    assert trainer.logparser.last_iteration["loss"] == pytest.approx(
        ref_trainer.logparser.last_iteration["loss"], rel=1e-4)
    ref, tagger = theirs.Tagger(), ours.Tagger()
    ref.open(str(path))
    tagger.open(str(path))
    assert ref.labels() == tagger.labels()
    assert all(ref.tag(x) == tagger.tag(x) for x in X[150:])


def test_trainer_parameters_and_log_as_python_crfsuite(data):
    X, y = data
    trainer, ref = ours.Trainer(verbose=False), theirs.Trainer(verbose=False)
    assert set(ours.Trainer().params()) <= set(ref.params())
    for name in trainer.params():
        assert type(trainer.get(name)) is type(ref.get(name)), name
        assert trainer.get(name) == pytest.approx(ref.get(name)), name
    with pytest.raises(ValueError, match="Parameter not found"):
        trainer.set("no.such", 1)
    with pytest.raises(ValueError, match="L-BFGS only"):
        trainer.select("l2sgd")
    for xseq, yseq in zip(X[:60], y[:60]):
        trainer.append(xseq, yseq, group=int(len(xseq) % 3 == 0))
    trainer.set_params({"max_iterations": 5})
    trainer.train("", holdout=1)
    log = trainer.logparser
    assert 1 <= len(log.iterations) <= 5
    last = log.last_iteration
    assert {"num", "loss", "feature_norm", "error_norm", "active_features", "linesearch_trials",
            "linesearch_step", "time", "scores"} <= set(last)
    assert set(last["scores"]) <= set(trainer_labels(y[:60]))
    with pytest.raises(ValueError, match="items but the label"):
        trainer.append(X[0], y[0][:-1])


def trainer_labels(y):
    return {lab for seq in y for lab in seq}


def test_items_follow_python_crfsuites_rules(crfsuite_file):
    """Strings are attributes of weight 1, nested dicts join keys with ':',
    lists of strings are several attributes, ItemSequence is accepted."""
    ref, tagger = theirs.Tagger(), ours.Tagger()
    ref.open(str(crfsuite_file))
    tagger.open(str(crfsuite_file))
    names = sorted(ref.info().attributes)[:40]
    xseqs = [
        [names[:3], names[3:5], [names[6]]],
        [{n: 0.5 for n in names[:6]}, {"w": {n.split("=", 1)[-1]: 1.0 for n in names[6:9]}}],
        [{"w=w1": True, "len": 2}],
    ]
    for xseq in xseqs:
        assert tagger.tag(xseq) == ref.tag(xseq)
        assert tagger.tag(ours.ItemSequence(xseq)) == ref.tag(theirs.ItemSequence(xseq))
        assert ours.ItemSequence(xseq).items() == theirs.ItemSequence(xseq).items()


@pytest.mark.parametrize("cut", [0, 4, 47, 100, -9])
def test_truncated_or_foreign_files_are_clear_errors(crfsuite_file, tmp_path, cut):
    data = crfsuite_file.read_bytes()
    tagger = ours.Tagger()
    with pytest.raises(ValueError, match="(?i)model"):
        tagger.open_inmemory(data[:cut])
    bad = tmp_path / "bad.crfsuite"
    bad.write_bytes(b"PK\x03\x04" + data[4:])
    with pytest.raises(ValueError, match="not a CRFsuite model"):
        tagger.open(str(bad))
    with pytest.raises(ValueError, match="Error opening"):
        tagger.open(str(tmp_path / "missing.crfsuite"))


@pytest.mark.parametrize("L", [1, 3, 9, 25])
def test_single_sequence_paths_agree_with_the_batch_kernels(L):
    # Tagger.tag decodes one sequence per call through its own short paths
    # (NumPy, and the compiled kernel called directly): the same labels and
    # scores as the batch drivers, tokens without attributes included
    import numpy as np

    from skcrf._arrays import KernelArrays, Weights
    from skcrf._inference import viterbi, viterbi_sequence, viterbi_table
    from skcrf.compat._crfsuite_model import _viterbi_one

    rng = np.random.default_rng(L)
    W = rng.normal(size=(40, L))
    A = rng.normal(size=(L, L))
    weights = Weights.from_arrays(W, A, np.zeros(L), np.zeros(L))
    table = viterbi_table(A)
    work = None
    for T in (1, 2, 7, 30):
        counts = rng.integers(0, 4, size=T)
        counts[rng.integers(0, T)] = 0                       # a token with no attribute
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        indices = rng.integers(0, 40, size=indptr[-1]).astype(np.int32)
        data = rng.uniform(0.5, 2.0, size=indices.size)
        arrays = KernelArrays(indptr, indices, data, np.array([0, T], np.int64))
        labels, score = viterbi(arrays, weights)
        mine, my_score = _viterbi_one(arrays, weights)
        assert mine.tolist() == labels.tolist()
        assert my_score[0] == pytest.approx(score[0], rel=1e-12)
        direct, direct_score, work = viterbi_sequence(arrays, weights, table, work)
        assert direct.tolist() == labels.tolist()
        assert direct_score[0] == score[0]
