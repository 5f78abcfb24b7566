"""The command line, CRF++ templates and data, and the safe model file."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from skcrf import SequenceFeaturizer, load_model
from skcrf.cli import main
from skcrf.exceptions import ModelFileError, TemplateError
from skcrf.feature_extraction._crfpp import parse_template
from skcrf.io._model import read_model

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
    from skcrf.io._columns import read_columns
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
            "from skcrf.io import read_model\n"
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
    with pytest.raises(ModelFileError, match="'A' has dtype object"):
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
    from skcrf.cli._train import _c2

    assert _c2(Namespace(c2=None, C=None, format="columns")) == 0.5   # CRF++'s C = 1
    assert _c2(Namespace(c2=None, C=None, format="segmented")) == WordSegmenter().c2
    assert _c2(Namespace(c2=None, C=2.0, format="segmented")) == 0.25
    assert _c2(Namespace(c2=0.7, C=None, format="columns")) == 0.7


def test_input_files_may_start_with_a_byte_order_mark(tmp_path, capsys):
    from skcrf.cli._train import read_training
    from skcrf.io._columns import read_columns

    plain, bom = tmp_path / "plain.txt", tmp_path / "bom.txt"
    plain.write_text("上 B\n海 E\n\n迎 S\n", encoding="utf-8")
    bom.write_text("\ufeff上 B\n海 E\n\n迎 S\n", encoding="utf-8")
    assert read_columns([bom]) == read_columns([plain])
    assert read_training([str(bom)], "columns", "utf-8-sig") == \
        read_training([str(plain)], "columns", "utf-8-sig")
    plain.write_text("上海  迎\n", encoding="utf-8")
    bom.write_text("\ufeff上海  迎\n", encoding="utf-8")
    assert read_training([str(bom)], "segmented", "utf-8-sig") == (["上海迎"], [["上海", "迎"]])


# ------------------------------------------------------ options and input
@pytest.mark.parametrize("argv, says", [
    (["train", "--c2", "-1"], "--c2: -1 must be a finite number >= 0"),
    (["train", "--c1", "-1"], "--c1"),
    (["train", "--max-iter", "-1"], "--max-iter: -1 must be at least 1"),
    (["train", "--tol", "nan"], "--tol: nan must be a finite number"),
    (["train", "-c", "nan"], "-c: nan must be a finite number > 0"),
    (["train", "-c", "0"], "-c: 0 must be a finite number > 0"),
    (["train", "-p", "0"], "--threads: 0 must be at least 1 (or -1)"),
    (["train", "-f", "0"], "--min-freq"),
    (["train", "--constraints", "XYZ"], "--constraints"),
    (["train", "--c2", "1", "-c", "2"], "not both"),
    (["train", "--format", "segmented", "--c1", "0.5"], "--c1 does not apply"),
    (["tag", "-n", "-3"], "--nbest: -3 must be at least 0"),
    (["tag", "--block", "0"], "--block: 0 must be at least 1"),
    (["tag", "--encoding", "nosuch"], "no such encoding"),
    (["dump", "-k", "-1"], "--top: -1 must be at least 0"),
])
def test_every_bad_option_is_one_line_and_exit_2(files, capsys, tmp_path, argv, says):
    cmd = argv[0]
    model = tmp_path / "m.skcrf"
    if cmd == "train":
        argv = argv + ["-m", model, files / "train.txt"]
    else:
        argv = argv + ["-m", files / "model.skcrf"] + ([files / "test.txt"] if cmd == "tag"
                                                         else [])
    code, out, err = _run(argv, capsys)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and says in err, err
    assert not model.exists() and "read " not in err     # nothing trained or written


def test_an_unwritable_model_path_is_refused_before_training(files, capsys, tmp_path,
                                                             monkeypatch):
    for target, says in ((tmp_path / "no" / "dir" / "m.skcrf", "no such directory"),
                         (tmp_path, "a directory")):
        code, _, err = _run(["train", "-m", target, files / "train.txt"], capsys)
        assert code == 2 and says in err and "read " not in err
    # a directory this user may not write in (simulated: root writes anywhere)
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    code, _, err = _run(["train", "-m", tmp_path / "m.skcrf", files / "train.txt"], capsys)
    assert code == 2 and "cannot write" in err and "Permission denied" in err


def test_input_encodings_and_binary_input(files, capsys, tmp_path):
    text = "上海 NR B-LOC\n迎 VV O\n\n北京 NR B-LOC\n"
    for enc in ("gbk", "utf-16"):
        path = tmp_path / f"{enc}.txt"
        path.write_bytes(text.encode(enc))
        code, _, err = _run(["train", "-m", tmp_path / "m.skcrf", "--max-iter", "3", path],
                            capsys)
        assert code == 2 and f"{path}:1: not utf-8-sig text" in err and "--encoding" in err
        code, _, err = _run(["train", "-m", tmp_path / "m.skcrf", "--max-iter", "3",
                             "--encoding", enc, path], capsys)
        assert code == 0, err
    gbk_later = tmp_path / "later.txt"
    gbk_later.write_bytes(b"a NR O\n" + "北京 NR B-LOC\n".encode("gbk"))
    code, _, err = _run(["tag", "-m", tmp_path / "m.skcrf", gbk_later], capsys)
    assert code == 2 and f"{gbk_later}:2: not utf-8-sig text" in err
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"a NR O\n\x00\x01\x02 x y\n")
    code, _, err = _run(["tag", "-m", tmp_path / "m.skcrf", binary], capsys)
    assert code == 2 and f"{binary}:2: binary data" in err


def _skcrf(args, **kw):
    return subprocess.run([sys.executable, "-m", "skcrf"] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=600, **kw)


def test_closed_standard_streams(files):
    model = files / "model.skcrf"
    shell = f"{sys.executable} -m skcrf tag -m {model}"
    res = subprocess.run(["bash", "-c", shell + " <&-"], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 2 and "standard input is closed" in res.stderr
    res = subprocess.run(["bash", "-c", shell + f" {files / 'test.txt'} >&-"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "standard output is closed" in res.stderr
    assert "Traceback" not in res.stderr


def test_sigterm_while_saving_leaves_no_temporary_file(files, capsys, tmp_path, monkeypatch):
    import signal

    import skcrf.io._model_file as model_file

    real = model_file.np.savez_compressed

    def killed(fh, **arrays):
        fh.write(b"PK\x03\x04 partial")
        os.kill(os.getpid(), signal.SIGTERM)
        real(fh, **arrays)

    monkeypatch.setattr(model_file.np, "savez_compressed", killed)
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = _run(["train", "-m", out / "m.skcrf", "--max-iter", "3",
                         files / "train.txt"], capsys)
    assert code == 143 and "terminated" in err
    assert list(out.iterdir()) == []


def test_ctrl_c_during_training_is_one_line(files, tmp_path):
    import signal
    import time

    # enough data that the fit still runs for seconds after its third
    # iteration (it stops where the line search finds no lower objective,
    # about 50 iterations in, and a small file gets there in a blink)
    big = tmp_path / "big.txt"
    big.write_text((files / "train.txt").read_text() * 100)
    # Ctrl-C in a terminal: SIGINT at its default disposition in the child
    # (a test run started in the background of a non-interactive shell
    # ignores SIGINT, and a child inherits that: Python then installs no
    # KeyboardInterrupt handler and the fit would run to its end)
    proc = subprocess.Popen([sys.executable, "-m", "skcrf", "train", "-m",
                             str(tmp_path / "m.skcrf"), "--tol", "0", "--max-iter", "100000",
                             "--c2", "1e-6", str(big)],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    deadline = time.time() + 300
    while time.time() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        if line.startswith("iter    3") or not line:
            break
    assert line.startswith("iter    3"), "".join(lines)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 130
    tail = [ln for ln in rest.splitlines() if ln and not ln.startswith("iter")]
    assert len(tail) == 1 and "interrupted at iteration" in tail[0] \
        and "no model written" in tail[0], rest
    assert not (tmp_path / "m.skcrf").exists()


def test_version_help_and_examples():
    res = _skcrf(["--version"])
    assert res.returncode == 0 and res.stdout.startswith("skcrf ")
    from skcrf.cli._parser import parser

    ap = parser()
    sub = next(a for a in ap._actions if a.dest == "command")
    for name, p in sub.choices.items():
        assert "examples:" in (p.epilog or ""), name
        for action in p._actions:
            if action.dest != "help":
                assert action.help, (name, action.dest)


def test_eval_reads_tag_verbose_output_and_refuses_nbest(files, capsys, tmp_path):
    model = files / "model.skcrf"
    scores = {}
    for flags in ([], ["-v1"], ["-v2"]):
        code, out, err = _run(["tag", "-m", model] + flags + [files / "test.txt"], capsys)
        assert code == 0, err
        tagged = tmp_path / ("t" + "".join(flags) + ".txt")
        tagged.write_text(out)
        code, report, err = _run(["eval", tagged], capsys)
        assert code == 0, err
        scores[tuple(flags)] = report
    assert len(set(scores.values())) == 1
    code, out, _ = _run(["tag", "-m", model, "-n", "2", files / "test.txt"], capsys)
    nbest = tmp_path / "nbest.txt"
    nbest.write_text(out)
    code, _, err = _run(["eval", nbest], capsys)
    assert code == 2 and "n-best" in err


def test_foreign_model_files_are_named(files, capsys, tmp_path):
    import pickle

    crfpp = tmp_path / "model.crfpp"
    crfpp.write_text("version: 100\ncost-factor: 1\nmaxid: 10\nxsize: 2\n\nB\nO\n")
    pkl = tmp_path / "model.pkl"
    pkl.write_bytes(pickle.dumps({"a": 1}))
    for path, says in ((crfpp, "CRF++ model"), (pkl, "pickle")):
        code, _, err = _run(["tag", "-m", path, files / "test.txt"], capsys)
        assert code == 2 and says in err and "allow_pickle" not in err
