"""Start-up of ``skcrf tag``, and NumPy against Numba tagging throughput.

Trains a CoNLL-2002 Spanish model with the command line (the tutorial
features as a CRF++ template, as ``bench_crfpp.py``), then

1. times ``skcrf tag`` on a 10-sentence file in fresh processes (median of
   7, Numba cache warm): the default path and ``-v1`` (both NumPy alone for
   small inputs), and ``-n 2`` (k-best: the Numba kernels);
2. tags esp.testb in blocks of 1,000 sentences in one process with each
   engine (``Model.predict(engine=...)``, warm), and reports tokens/s and
   the input size above which loading Numba pays for itself — the basis of
   ``skcrf._numpy_tagger.MAX_TOKENS``.

    python benchmarks/claims/bench_cli_startup.py --data ../shared/data/conll2002
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, machine
from bench_crfpp import write_problem


def run_time(cmd, n=7):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    args = ap.parse_args()
    skcrf = [sys.executable, "-m", "skcrf"]
    print(f"# skcrf tag start-up and NumPy / Numba tagging — {date.today()} — {machine()}")
    with tempfile.TemporaryDirectory() as d:
        train, test, tpl = write_problem(args.data, d)
        model = os.path.join(d, "model.skcrf")
        subprocess.run(skcrf + ["train", "-t", tpl, "-m", model, "-p", "2", train],
                       check=True, capture_output=True)
        blocks = open(test, encoding="utf-8").read().split("\n\n")
        ten = os.path.join(d, "ten")
        with open(ten, "w", encoding="utf-8") as fh:
            fh.write("\n\n".join(blocks[:10]) + "\n\n")
        print(f"model: {os.path.getsize(model) / 1e6:.1f} MB; 10 sentences, "
              f"{sum(len(b.splitlines()) for b in blocks[:10])} tokens\n")
        subprocess.run(skcrf + ["tag", "-m", model, "-v1", ten], check=True,
                       capture_output=True)                     # warm the Numba cache
        print("| command (fresh process, warm Numba cache) | median s | min | max |")
        print("|---|---|---|---|")
        for extra in ([], ["-v1"], ["-n", "2"]):
            med, lo, hi = run_time(skcrf + ["tag", "-m", model] + extra + [ten])
            print(f"| skcrf tag {' '.join(extra)} (10 sentences) | {med:.2f} | {lo:.2f} | "
                  f"{hi:.2f} |")
        med, lo, hi = run_time([sys.executable, "-c", "import numba"])
        print(f"| python -c 'import numba' | {med:.2f} | {lo:.2f} | {hi:.2f} |")

        from skcrf._numpy_inference import MAX_TOKENS
        from skcrf.io._columns import read_columns
        from skcrf.io._model import read_model

        m = read_model(model)
        Xt, _ = read_columns([test])
        Xt = [[t[:m.n_columns] for t in s] for s in Xt]
        n_tok = sum(map(len, Xt))
        t = time.perf_counter()
        m.predict(Xt[:5], engine="numba")
        first = time.perf_counter() - t
        rate = {}
        for engine in ("numpy", "numba"):
            best = float("inf")
            for _ in range(3):
                t = time.perf_counter()
                for i in range(0, len(Xt), 1000):
                    m.predict(Xt[i:i + 1000], engine=engine)
                best = min(best, time.perf_counter() - t)
            rate[engine] = n_tok / best
        per_token = 1 / rate["numpy"] - 1 / rate["numba"]
        print(f"\nesp.testb ({n_tok:,} tokens) in blocks of 1,000 sentences, one thread, "
              f"best of 3: NumPy {rate['numpy']:,.0f} tokens/s, Numba {rate['numba']:,.0f} "
              f"tokens/s; Numba's first call in this process (load + cached functions) "
              f"{first:.2f} s.")
        if per_token > 0:
            print(f"Loading Numba pays off above ~{first / per_token:,.0f} tokens "
                  f"(MAX_TOKENS is {MAX_TOKENS:,}).")
        else:
            print("NumPy is not slower here: Numba never pays off for one thread.")


if __name__ == "__main__":
    main()
