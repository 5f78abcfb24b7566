"""The command line, CRF++ templates and data, and the safe model file."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from skcrf import SequenceFeaturizer, load_model
from skcrf._crfpp import TemplateError, parse_template
from skcrf._model_io import ModelFileError, read_model
from skcrf.cli import main

TEMPLATE = """# a comment, then a blank line

U00:%x[-1,0]
U01:%x[0,0]/%x[0,1]
U02:%x[1,0]/%x[-1,1]/%x[0,0]
U03:const
B
"""


def _crfpp_expand(sent, t):
    """CRF++'s expansion of TEMPLATE at token t, by hand."""
    def x(row, col):
        i = t + row
        if i < 0:
            return f"_B-{-i}"
        if i >= len(sent):
            return f"_B+{i - len(sent) + 1}"
        return sent[i][col]
    return {f"U00:{x(-1, 0)}", f"U01:{x(0, 0)}/{x(0, 1)}",
            f"U02:{x(1, 0)}/{x(-1, 1)}/{x(0, 0)}", "U03:const"}


def test_crfpp_templates_expand_as_crfpp_does():
    sents = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT")], [("Oh", "UH")]]
    f = SequenceFeaturizer(template=TEMPLATE)
    X = f.fit_transform(sents)
    names = f.get_feature_names_out()
    for s, sent in enumerate(sents):
        for t in range(len(sent)):
            assert set(names[X[s][t].indices]) == _crfpp_expand(sent, t), (s, t)
    # the same expansion is the same feature wherever it occurs
    Z = f.transform([[("Oh", "UH"), ("He", "PRP"), ("reckons", "NN")]])
    assert set(names[Z[0][2].indices]) == {"U00:He", "U03:const"}


@pytest.mark.parametrize("line,match", [
    ("X01:%x[0,0]", r"<template>:1: a template line starts with U"),
    ("U01:%x[0,0]/%y[1,0]", r"<template>:1: bad macro"),
    ("U01:%x[0,0", r"<template>:1: bad macro"),
    ("U01:%x[0,5]", r"<template>:1: column 5 does not exist"),
    ("U01:%x[500,0]", r"<template>:1: row 500 is out of range"),
    ("B01:%x[0,0]", r"<template>:1: .*transition weights depend on the observation"),
])
def test_malformed_template_lines_name_file_and_line(line, match):
    with pytest.raises(TemplateError, match=match):
        parse_template(line + "\n", n_columns=2)


def test_template_errors_name_the_file(tmp_path):
    path = tmp_path / "template"
    path.write_text("U00:%x[0,0]\n\nU01:%x[1,%x]\n")
    with pytest.raises(TemplateError, match=f"{path}:3: bad macro"):
        parse_template(str(path))


# ----------------------------------------------------------------- end to end
def _conll(rng, n):
    words = ["Juan", "vive", "en", "Madrid", "y", "Ana", "trabaja", "para", "Telefónica"]
    tags = {"Juan": "B-PER", "Ana": "B-PER", "Madrid": "B-LOC", "Telefónica": "B-ORG"}
    lines, seqs = [], []
    for _ in range(n):
        T = int(rng.integers(2, 8))
        seq = [words[int(k)] for k in rng.integers(0, len(words), size=T)]
        seqs.append(seq)
        for w in seq:
            lines.append(f"{w} {'NP' if w[0].isupper() else 'VM'} {tags.get(w, 'O')}")
        lines.append("")
    return "\n".join(lines) + "\n", seqs


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    train, _ = _conll(rng, 150)
    test, _ = _conll(rng, 40)
    (d / "train.txt").write_text(train)
    (d / "test.txt").write_text(test)
    (d / "template").write_text(TEMPLATE)
    return d


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_train_tag_eval_equals_the_python_api(files, capsys):
    model = files / "model.skcrf"
    code, _, err = _run(["train", "-t", files / "template", "-m", model, "-c", "2",
                         files / "train.txt"], capsys)
    assert code == 0, err
    assert "iter    1" in err and "wrote" in err          # progress on stderr
    code, out, err = _run(["tag", "-m", model, files / "test.txt"], capsys)
    assert code == 0, err
    tagged = files / "tagged.txt"
    tagged.write_text(out)
    lines = [ln for ln in out.splitlines() if ln]
    assert all(len(ln.split("\t")) == 4 for ln in lines)   # word, pos, gold, predicted
    code, report, _ = _run(["eval", tagged], capsys)
    assert code == 0 and "FB1" in report
    f1_cli = float(report.split("FB1:")[1].split()[0]) / 100

    from sklearn.pipeline import make_pipeline

    from skcrf import LinearChainCRF
    from skcrf._crfpp import read_columns
    from skcrf.metrics import span_f1_score

    X, y = read_columns([files / "train.txt"])
    Xt, yt = read_columns([files / "test.txt"])
    pipe = make_pipeline(SequenceFeaturizer(template=TEMPLATE),
                         LinearChainCRF(c2=1 / (2 * 2.0), all_possible_states=True,
                                        start_end_transitions=False)).fit(X, y)
    assert f1_cli == pytest.approx(span_f1_score(yt, pipe.predict(Xt)), abs=5e-5)
    loaded = load_model(model)
    assert loaded.predict(Xt) == pipe.predict(Xt)


def test_tag_probabilities_and_nbest_layouts(files, capsys):
    model = files / "m2.skcrf"
    assert _run(["train", "-t", "chunk", "-m", model, files / "train.txt"], capsys)[0] == 0
    _, v1, _ = _run(["tag", "-m", model, "-v1", files / "test.txt"], capsys)
    blocks = [b for b in v1.strip().split("\n\n")]
    first = blocks[0].splitlines()
    assert first[0].startswith("# ") and 0 < float(first[0][2:]) <= 1
    label, prob = first[1].split("\t")[-1].split("/")
    assert 0 < float(prob) <= 1
    _, v2, _ = _run(["tag", "-m", model, "-v2", files / "test.txt"], capsys)
    row = v2.splitlines()[1].split("\t")
    m = read_model(model)
    assert [c.split("/")[0] for c in row[-len(m.labels):]] == m.labels
    assert sum(float(c.split("/")[1]) for c in row[-len(m.labels):]) == pytest.approx(1, abs=1e-5)
    _, nb, _ = _run(["tag", "-m", model, "-n", "3", files / "test.txt"], capsys)
    heads = [ln for ln in nb.splitlines() if ln.startswith("#")]
    assert heads[:3] == [h for h in heads[:3]] and heads[0].startswith("# 0 ")
    probs = [float(h.split()[2]) for h in heads[:3]]
    assert probs == sorted(probs, reverse=True) and probs[0] == pytest.approx(
        float(first[0][2:]), rel=1e-5)


def test_user_errors_exit_2_with_one_line(files, capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("a NP O\nb NP\n")
    code, _, err = _run(["train", "-m", tmp_path / "x", bad], capsys)
    assert code == 2 and f"{bad}:2: 2 columns" in err and len(err.strip().splitlines()) == 1
    code, _, err = _run(["tag", "-m", tmp_path / "missing.skcrf", files / "test.txt"], capsys)
    assert code == 2 and "no such model file" in err
    tpl = tmp_path / "tpl"
    tpl.write_text("U0:%x[0,0]\nB1:%x[0,0]\n")
    code, _, err = _run(["train", "-t", tpl, "-m", tmp_path / "x", files / "train.txt"], capsys)
    assert code == 2 and f"{tpl}:2:" in err
    code, _, err = _run(["train", "-t", "nosuch", "-m", tmp_path / "x", files / "train.txt"],
                        capsys)
    assert code == 2 and "preset" in err


def test_corrupted_and_truncated_model_files(files, capsys, tmp_path):
    model = files / "model.skcrf"
    if not model.exists():
        _run(["train", "-t", files / "template", "-m", model, files / "train.txt"], capsys)
    data = model.read_bytes()
    cut = tmp_path / "cut.skcrf"
    cut.write_bytes(data[: len(data) // 2])
    junk = tmp_path / "junk.skcrf"
    junk.write_bytes(b"not a model at all")
    for path in (cut, junk):
        with pytest.raises(ModelFileError, match=str(path)):
            read_model(path)
        code, _, err = _run(["tag", "-m", path, files / "test.txt"], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1
    other = tmp_path / "other.npz"
    np.savez(other, __meta__=np.frombuffer(json.dumps({"format": "x"}).encode(), np.uint8))
    with pytest.raises(ModelFileError, match="not an skcrf model"):
        read_model(other)


def test_reading_a_model_needs_no_sklearn_and_never_unpickles(files, capsys, tmp_path):
    model = files / "model.skcrf"
    if not model.exists():
        _run(["train", "-t", files / "template", "-m", model, files / "train.txt"], capsys)
    code = ("import sys\n"
            "from skcrf._model_io import read_model\n"
            f"m = read_model({str(model)!r})\n"
            "print(m.predict([[('Juan', 'NP'), ('vive', 'VM')]]))\n"
            "bad = [k for k in sys.modules\n"
            "       if k.split('.')[0] in ('sklearn', 'scipy', 'numba')]\n"
            "assert not bad, bad\n")   # a short input is tagged by NumPy alone
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert "B-PER" in res.stdout
    with np.load(model, allow_pickle=False) as z:     # plain arrays only
        assert "__meta__" in z.files
    # a file smuggling a pickled object array is refused, not unpickled
    evil = tmp_path / "evil.skcrf"
    with np.load(model, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["A"] = np.array([object()], dtype=object)
    with open(evil, "wb") as fh:
        np.savez(fh, **arrays)
    with pytest.raises(ModelFileError, match="not a readable"):
        read_model(evil)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_segmenter_train_and_segment(tmp_path, capsys):
    from skcrf.datasets import load_sample_cws

    sents = load_sample_cws()[:200]
    train = tmp_path / "train.txt"
    train.write_text("\n".join("  ".join(s) for s in sents[:180]) + "\n")
    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join("".join(s) for s in sents[180:]) + "\n")
    model = tmp_path / "seg.skcrf"
    code, _, err = _run(["train", "--format", "segmented", "-m", model, "--max-iter", "40",
                         train], capsys)
    assert code == 0, err
    assert "OOV model" in err and read_model(model).oov is not None
    code, out, _ = _run(["dump", "-m", model, "-k", "2"], capsys)
    assert code == 0 and "OOV model (character features only" in out
    code, out, err = _run(["segment", "-m", model, raw], capsys)
    assert code == 0, err
    pred = [ln.split() for ln in out.splitlines()]
    assert ["".join(p) for p in pred] == ["".join(s) for s in sents[180:]]
    gold = tmp_path / "gold.txt"
    gold.write_text("\n".join("  ".join(s) for s in sents[180:]) + "\n")
    predf = tmp_path / "pred.txt"
    predf.write_text(out)
    code, report, _ = _run(["eval", "--format", "segmented", gold, predf, "--train", train],
                           capsys)
    assert code == 0 and "OOV recall" in report
    assert load_model(model).predict(["".join(s) for s in sents[180:]]) == pred
    code, _, err = _run(["tag", "-m", model, raw], capsys)
    assert code == 2 and "segment" in err


def test_dump_lists_transitions_and_top_features(files, capsys):
    model = files / "model.skcrf"
    if not model.exists():
        _run(["train", "-t", files / "template", "-m", model, files / "train.txt"], capsys)
    code, out, _ = _run(["dump", "-m", model, "-k", "3"], capsys)
    assert code == 0 and "transitions" in out and "top 3 state features of B-PER" in out
    assert "U01:Juan/NP" in out or "U00:" in out


def test_console_script_is_declared():
    text = open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml")).read()
    assert 'skcrf = "skcrf.cli:main"' in text


def test_default_c2_follows_crfpp_or_the_word_segmenter():
    from argparse import Namespace

    from skcrf import WordSegmenter
    from skcrf.cli import _c2

    assert _c2(Namespace(c2=None, C=None, format="columns")) == 0.5      # CRF++'s C = 1
    assert _c2(Namespace(c2=None, C=None, format="segmented")) == WordSegmenter().c2
    assert _c2(Namespace(c2=None, C=2.0, format="segmented")) == 0.25
    assert _c2(Namespace(c2=0.7, C=None, format="columns")) == 0.7


def test_input_files_may_start_with_a_byte_order_mark(tmp_path, capsys):
    from skcrf._crfpp import read_columns
    from skcrf.cli import _read_training

    plain, bom = tmp_path / "plain.txt", tmp_path / "bom.txt"
    plain.write_text("上 B\n海 E\n\n迎 S\n", encoding="utf-8")
    bom.write_text("\ufeff上 B\n海 E\n\n迎 S\n", encoding="utf-8")
    assert read_columns([bom]) == read_columns([plain])
    assert _read_training([str(bom)], "columns") == _read_training([str(plain)], "columns")
    plain.write_text("上海  迎\n", encoding="utf-8")
    bom.write_text("\ufeff上海  迎\n", encoding="utf-8")
    assert _read_training([str(bom)], "segmented") == (["上海迎"], [["上海", "迎"]])
