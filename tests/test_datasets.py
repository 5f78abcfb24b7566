import subprocess
import sys

from skcrf.datasets import load_sample_cws, read_conll, read_conllu


def test_bundled_sample():
    sents = load_sample_cws()
    assert len(sents) == 1000
    assert all(isinstance(w, str) and w and not w.isspace() for s in sents for w in s)
    assert sum(len("".join(s)) for s in sents) == 38677


def test_read_conllu(tmp_path):
    p = tmp_path / "a.conllu"
    p.write_text("# text = x\n1-2\t上海市\t_\t_\t_\t_\t_\t_\t_\t_\n"
                 "1\t上海\t_\tPROPN\tNNP\t_\t0\troot\t_\t_\n"
                 "2\t市\t_\tNOUN\tNN\t_\t1\tdep\t_\t_\n\n", encoding="utf-8")
    assert read_conllu(p) == [["上海", "市"]]
    assert read_conllu(p, columns=("form", "upos")) == [[("上海", "PROPN"), ("市", "NOUN")]]


def test_read_conll(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("-DOCSTART- -DOCSTART- O\n\nMelbourne NP B-LOC\n( Fpa O\n\nx Y O\n")
    X, y = read_conll(p)
    assert X == [[("Melbourne", "NP"), ("(", "Fpa")], [("x", "Y")]]
    assert y == [["B-LOC", "O"], ["O"]]


def test_readers_skip_a_byte_order_mark(tmp_path):
    conll, conllu = tmp_path / "a.txt", tmp_path / "a.conllu"
    conll.write_text("\ufeffMelbourne NP B-LOC\n", encoding="utf-8")
    assert read_conll(conll) == ([[("Melbourne", "NP")]], [["B-LOC"]])
    conllu.write_text("\ufeff1\t上海\t_\tPROPN\t_\t_\t0\troot\t_\t_\n", encoding="utf-8")
    assert read_conllu(conllu) == [["上海"]]


def test_demo_command_runs():
    out = subprocess.run([sys.executable, "-m", "skcrf", "demo"], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "F1" in out.stdout and "OOV recall" in out.stdout
    f1 = float(out.stdout.split("F1 ")[1].split()[0])
    assert f1 > 0.8  # 900 training sentences: measured 0.858
