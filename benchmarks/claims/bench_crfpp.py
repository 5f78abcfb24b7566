"""CRF++ against skcrf's command line on CoNLL-2002 Spanish, same template and data.

The data is written in CRF++'s column format with the sklearn-crfsuite
tutorial's token attributes as columns (word, lowercase, last 3 / 2
characters, is-upper, is-title, is-digit, POS tag, its first 2 characters,
label), and one template file expands them as the tutorial does (the token's
attributes, the neighbours' lowercase / title / upper / POS / POS[:2], a
bias). Both engines train on esp.train with the same regularisation (CRF++
``-c C``, skcrf ``-c C``: c2 = 1 / (2 C)), CRF++ with ``-p 2``, skcrf with
``-p 2``, tag esp.testb, and are scored by ``skcrf eval`` (entity F1,
conlleval's definition). The Python API (SequenceFeaturizer with the same
template, LinearChainCRF with the same c2) gives the reference F1.

CRF++ comes from the PyPI package ``crfpy`` (its ``crf_learn`` / ``crf_test``).

    pip install crfpy
    python benchmarks/claims/bench_crfpp.py --data ../shared/data/conll2002
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, machine

TEMPLATE = """# the sklearn-crfsuite tutorial features as CRF++ templates
# columns: 0 word, 1 lower, 2 suffix3, 3 suffix2, 4 upper, 5 title, 6 digit, 7 pos, 8 pos[:2]
U01:%x[0,1]
U02:%x[0,2]
U03:%x[0,3]
U04:%x[0,4]
U05:%x[0,5]
U06:%x[0,6]
U07:%x[0,7]
U08:%x[0,8]
U11:%x[-1,1]
U12:%x[-1,5]
U13:%x[-1,4]
U14:%x[-1,7]
U15:%x[-1,8]
U21:%x[1,1]
U22:%x[1,5]
U23:%x[1,4]
U24:%x[1,7]
U25:%x[1,8]
U99:bias
B
"""


def write_columns(src, dst):
    """CoNLL-2002 -> CRF++ columns with the tutorial's attributes."""
    from skcrf.datasets import read_conll

    X, y = read_conll(src)
    with open(dst, "w", encoding="utf-8") as fh:
        for sent, labels in zip(X, y):
            for (word, pos), lab in zip(sent, labels):
                cols = [word, word.lower(), word[-3:], word[-2:], str(word.isupper()),
                        str(word.istitle()), str(word.isdigit()), pos, pos[:2], lab]
                fh.write(" ".join(cols) + "\n")
            fh.write("\n")
    return X, y


def write_problem(data, directory):
    """esp.train / esp.testb as CRF++ columns and the template, in ``directory``:
    their paths ``(train, test, template)``."""
    train, test, tpl = (os.path.join(directory, n) for n in ("train", "test", "template"))
    write_columns(os.path.join(data, "esp.train"), train)
    write_columns(os.path.join(data, "esp.testb"), test)
    with open(tpl, "w") as fh:
        fh.write(TEMPLATE)
    return train, test, tpl


def timed(cmd, **kw):
    t = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode:
        sys.stderr.write(res.stdout[-2000:] + res.stderr[-2000:])
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return time.perf_counter() - t, res


def f1_of(tagged, skcrf_cmd):
    _, res = timed(skcrf_cmd + ["eval", tagged])
    return float(re.search(r"FB1:\s*([\d.]+)", res.stdout).group(1)) / 100


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    ap.add_argument("-c", dest="C", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    crf_learn, crf_test = shutil.which("crf_learn"), shutil.which("crf_test")
    if not (crf_learn and crf_test):
        raise SystemExit("CRF++ not found: pip install crfpy")
    skcrf = [sys.executable, "-m", "skcrf"]
    print(f"# CRF++ vs skcrf, CoNLL-2002 Spanish, tutorial features as a CRF++ template, "
          f"-c {args.C} (c2 = {1 / (2 * args.C):g}) — {date.today()} — {machine()}")
    with tempfile.TemporaryDirectory() as d:
        train, test, tpl = write_problem(args.data, d)
        n_test = sum(1 for line in open(test, encoding="utf-8") if line.strip())
        rows = {}
        # --- skcrf command line
        model = os.path.join(d, "skcrf.model")
        t_fit, res = timed(skcrf + ["train", "-t", tpl, "-m", model, "-c", str(args.C),
                                    "-p", str(args.threads), train])
        it = re.search(r"trained in [\d.]+ s: (\d+) iterations.*objective ([\d.]+)",
                       res.stderr)
        tagged = os.path.join(d, "skcrf.tagged")
        t_tag, res = timed(skcrf + ["tag", "-m", model, "-p", str(args.threads), test])
        with open(tagged, "w", encoding="utf-8") as fh:
            fh.write(res.stdout)
        rows["skcrf"] = dict(fit=t_fit, iters=int(it.group(1)), obj=float(it.group(2)),
                             tag=t_tag, size=os.path.getsize(model), f1=f1_of(tagged, skcrf))
        # --- CRF++
        model = os.path.join(d, "crfpp.model")
        t_fit, res = timed([crf_learn, "-c", str(args.C), "-p", str(args.threads), tpl,
                            train, model])
        iters = re.findall(r"iter=(\d+)", res.stdout)
        objs = re.findall(r"obj=([\d.e+-]+)", res.stdout)
        t_tag, res = timed([crf_test, "-m", model, test])
        tagged = os.path.join(d, "crfpp.tagged")
        with open(tagged, "w", encoding="utf-8") as fh:
            fh.write(res.stdout)
        rows["CRF++"] = dict(fit=t_fit, iters=int(iters[-1]) + 1 if iters else 0,
                             obj=float(objs[-1]) if objs else float("nan"), tag=t_tag,
                             size=os.path.getsize(model), f1=f1_of(tagged, skcrf))
        # --- the Python API, same template and c2
        from sklearn.pipeline import make_pipeline

        from skcrf import LinearChainCRF, SequenceFeaturizer
        from skcrf.io._columns import read_columns
        from skcrf.metrics import span_f1_score

        X, y = read_columns([train])
        Xt, yt = read_columns([test])
        pipe = make_pipeline(SequenceFeaturizer(template=TEMPLATE),
                             LinearChainCRF(c2=1 / (2 * args.C), all_possible_states=True,
                                            start_end_transitions=False,
                                            n_jobs=args.threads)).fit(X, y)
        f1_api = span_f1_score(yt, pipe.predict(Xt))
    print("\n| engine | fit s | iterations | final objective | tag s (testb, incl. start-up) "
          "| tokens/s | model MB | entity F1 |\n|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['fit']:.1f} | {r['iters']} | {r['obj']:.2f} | {r['tag']:.2f} | "
              f"{n_test / r['tag']:,.0f} | {r['size'] / 1e6:.1f} | {r['f1']:.4f} |")
    a, b = rows["skcrf"], rows["CRF++"]
    print(f"\nskcrf / CRF++: fit {a['fit'] / b['fit']:.2f}x, tag {a['tag'] / b['tag']:.2f}x, "
          f"model size {a['size'] / b['size']:.2f}x, F1 {a['f1'] - b['f1']:+.4f}")
    print(f"Python API (SequenceFeaturizer(template=...) + LinearChainCRF(c2={1 / (2 * args.C):g},"
          f" all_possible_states=True, start_end_transitions=False)): entity F1 {f1_api:.4f}; "
          f"command line - API: {a['f1'] - f1_api:+.4f}")


if __name__ == "__main__":
    main()
