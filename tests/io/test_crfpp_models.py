"""CRF++ model files: models written by CRF++'s own ``crf_learn`` (the crfpy
package ships it), binary and text, tag a held-out file exactly as
``crf_test`` does — labels, n-best lists, and ``-v2`` probabilities to 1e-6
— through ``skcrf.load_model`` and ``skcrf tag``; malformed files are
clear errors."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import skcrf
from skcrf import ModelFileError
from skcrf.cli import main
from skcrf.io._crfpp_model import CRFppModel, read_crfpp
from tests.oracles.problems import synthetic_ner

CRF_LEARN, CRF_TEST = shutil.which("crf_learn"), shutil.which("crf_test")
pytestmark = pytest.mark.skipif(
    CRF_LEARN is None or CRF_TEST is None,
    reason="crfpy (CRF++'s crf_learn / crf_test) is in the [test] extra")

TEMPLATE = """\
# unigram: words around, word + shape, a constant
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0]/%x[0,0]
U06:%x[0,1]
U07:%x[0,0]/%x[0,1]/%x[1,1]
U08:bias

B
"""


def _shape(word):
    return "D" if word[-1].isdigit() and int(word[1:]) % 3 == 0 else "x"


def _columns(sents, tags):
    out = []
    for words, labels in zip(sents, tags):
        for w, lab in zip(words, labels):
            out.append(f"{w}\t{_shape(w)}\t{lab}")
        out.append("")
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def crfpp(tmp_path_factory):
    d = tmp_path_factory.mktemp("crfpp")
    sents, tags = synthetic_ner(260, seed=21)
    (d / "train.txt").write_text(_columns(sents[:200], tags[:200]), encoding="utf-8")
    (d / "test.txt").write_text(_columns(sents[200:], tags[200:]), encoding="utf-8")
    (d / "template").write_text(TEMPLATE, encoding="utf-8")
    subprocess.run([CRF_LEARN, "-t", "-c", "2.0", "-m", "60", str(d / "template"),
                    str(d / "train.txt"), str(d / "model")], check=True,
                   capture_output=True)
    return d


def _crf_test(d, *opts):
    return subprocess.run([CRF_TEST, "-m", str(d / "model"), *opts, str(d / "test.txt")],
                          check=True, capture_output=True, text=True).stdout


def _ours(d, model, capsys, *opts):
    assert main(["tag", "-m", str(d / model), *opts, str(d / "test.txt")]) == 0
    return capsys.readouterr().out


def _split(text):
    """(the output without its probabilities, the probabilities): crf_test
    prints them rounded to six decimals, so they are compared to 1e-6."""
    words, numbers = [], []
    for line in text.splitlines():
        if line.startswith("# "):
            head, _, p = line.rpartition(" ")
            words.append(head)
            numbers.append(float(p))
            continue
        fields = []
        for field in line.split("\t"):
            label, slash, p = field.rpartition("/")
            if slash and p.replace(".", "", 1).isdigit():
                fields.append(label)
                numbers.append(float(p))
            else:
                fields.append(field)
        words.append("\t".join(fields))
    return words, np.array(numbers)


@pytest.mark.parametrize("model", ["model", "model.txt"])
def test_tags_as_crf_test(crfpp, model, capsys):
    assert _ours(crfpp, model, capsys) == _crf_test(crfpp)
    for opts in (["-v1"], ["-v2"], ["-n", "3"]):
        ours, theirs = _split(_ours(crfpp, model, capsys, *opts)), _split(_crf_test(crfpp, *opts))
        assert ours[0] == theirs[0], opts
        assert ours[1].size == theirs[1].size > 0
        np.testing.assert_allclose(ours[1], theirs[1], atol=1.01e-6, rtol=0)


def test_load_model_reads_both_forms_alike(crfpp):
    binary, text = skcrf.load_model(crfpp / "model"), skcrf.load_model(crfpp / "model.txt")
    assert isinstance(binary, CRFppModel) and isinstance(text, CRFppModel)
    assert binary.labels == text.labels and binary.n_columns == 2
    assert binary.cost_factor == text.cost_factor == 1.0
    X = [[line.split("\t")[:2] for line in block.splitlines()]
         for block in (crfpp / "test.txt").read_text(encoding="utf-8").strip().split("\n\n")]
    assert binary.predict(X) == text.predict(X)
    # the binary form keeps float32 weights, the text form float64
    pb = binary.predict_marginals(X[:5])
    pt = text.predict_marginals(X[:5])
    for a, b in zip(pb, pt):
        for ra, rb in zip(a, b):
            assert ra == pytest.approx(rb, abs=1e-5)


@pytest.mark.parametrize("cut", [3, 20, 40, 120, -5])
def test_truncated_binary_models_name_the_file(crfpp, tmp_path, cut):
    bad = tmp_path / "cut.model"
    bad.write_bytes((crfpp / "model").read_bytes()[:cut])
    with pytest.raises(ModelFileError, match="cut.model"):
        skcrf.load_model(bad)


def test_crafted_models_are_clear_errors(crfpp, tmp_path):
    text = (crfpp / "model.txt").read_text(encoding="utf-8")
    cases = {
        "maxid": text.replace("maxid: ", "maxid: 9", 1),
        "version": text.replace("version: 100", "version: 900", 1),
        "bigram": text.replace("\nB\n", "\nB01:%x[0,0]\n", 1),
        "macro": text.replace("U02:%x[0,0]", "U02:%x[0,7]", 1),
        "row": text.replace("U02:%x[0,0]", "U02:%x[99,0]", 1),
        "weight": text.rstrip("\n").rsplit("\n", 1)[0] + "\nnan\n",
        "blocks": text.split("\n\n", 1)[0],
        "labels": text.replace("\n\n", "\n\n" + "".join(f"X{i}\n" for i in range(70_000)), 1),
        "fid": re.sub(r"\n\d+ U", "\n" + "9" * 30 + " U", text, count=1),
        "template": text.replace("\nU00:", "\nX00:", 1),
    }
    for name, body in cases.items():
        path = tmp_path / f"{name}.model"
        path.write_text(body, encoding="utf-8")
        with pytest.raises(ModelFileError, match=f"{name}.model"):
            skcrf.load_model(path)


def test_a_corrupted_trie_never_crashes(crfpp):
    # CRF++'s binary files have no checksum: bytes flipped inside the trie
    # can change which features are found, but every index is checked, so
    # tagging either works or raises ModelFileError / ValueError
    data = bytearray((crfpp / "model").read_bytes())
    rng = np.random.default_rng(0)
    X = [[("w1", "x"), ("w2", "D"), ("w3", "x")]]
    start = 200
    for _ in range(40):
        bad = bytearray(data)
        for pos in rng.integers(start, len(data) // 2, size=20):
            bad[pos] = int(rng.integers(256))
        try:
            model = read_crfpp(bytes(bad), "bad")
        except ModelFileError:
            continue
        labels = model.predict(X)
        assert len(labels[0]) == 3 and set(labels[0]) <= set(model.labels)


def test_dump_shows_a_crfpp_models_transitions(crfpp, capsys):
    assert main(["dump", "-m", str(crfpp / "model")]) == 0
    out = capsys.readouterr().out
    model = skcrf.load_model(crfpp / "model")
    assert out.startswith(f"CRF++ model: {len(model.labels)} labels, 2 feature column(s)")
    assert "U07:%x[0,0]/%x[0,1]/%x[1,1]" in out
    lines = out.splitlines()
    first = lines.index("transitions (from \\ to)") + 2          # after the header row
    for lab, line, row in zip(model.labels, lines[first:], model._A):
        assert line.split()[0] == lab
        np.testing.assert_allclose([float(v) for v in line.split()[1:]], row, atol=5e-4)
