"""What a first fit still compiles after ``skcrf compile`` (the documented way
to warm a cache for images and workers), per corpus of the label sweep and
thread count.

    python benchmarks/dev/first_fit_after_compile.py --data ../shared/data \
        [--corpora sxu,ner-bio,gsd-xpos,synth-100] [--checkout .]

A new, empty Numba cache; ``python -m skcrf compile --no-segmenter`` in it;
then, each in a new process: a fit of ``--max-iter`` iterations, the same fit
again, and a predict, with a listener on Numba's ``numba:compile`` events
(compilations only: loading from the cache raises none). Prints, per run,
the seconds spent compiling in the first fit and the first fit's time
over the second's.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

_RUN = r'''
import json, sys, time, warnings
sys.path[:0] = [CHECKOUT, BENCH, BENCH + "/claims"]
warnings.simplefilter("ignore")
from numba.core import event
compiling = [0.0]
depth = [0, 0.0]
class Listener(event.Listener):
    def on_start(self, ev):
        if depth[0] == 0:
            depth[1] = time.perf_counter()
        depth[0] += 1
    def on_end(self, ev):
        depth[0] -= 1
        if depth[0] == 0:
            compiling[0] += time.perf_counter() - depth[1]
event.register("numba:compile", Listener())
from _corpora import build
from bench_label_sweep import LIMITS
import skcrf
from skcrf import LinearChainCRF
assert skcrf.__file__.startswith(CHECKOUT), skcrf.__file__
Xtr, ytr, Xte, _, _ = build(CORPUS, DATA, LIMITS.get(CORPUS))
kw = dict(c2=1.0, all_possible_transitions=False, start_end_transitions=False,
          n_jobs=N_JOBS, max_iter=MAX_ITER, tol=0.0)
out = {"corpus": CORPUS, "n_jobs": N_JOBS}
for key in ("first", "second"):
    c0, t = compiling[0], time.perf_counter()
    crf = LinearChainCRF(**kw).fit(Xtr, ytr)
    out[key + "_fit_s"] = round(time.perf_counter() - t, 3)
    out[key + "_compiling_s"] = round(compiling[0] - c0, 3)
c0 = compiling[0]
crf.predict(Xte)
out["predict_compiling_s"] = round(compiling[0] - c0, 3)
print(json.dumps(out))
'''


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "..", "shared", "data"))
    ap.add_argument("--corpora", default="sxu,ner-bio,gsd-xpos,synth-100")
    ap.add_argument("--checkout", default=os.path.join(here, "..", ".."))
    ap.add_argument("--max-iter", type=int, default=10)
    args = ap.parse_args()
    checkout = os.path.abspath(args.checkout)
    bench = os.path.join(here, "..")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=checkout + os.pathsep + os.environ.get("PYTHONPATH", ""))
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "skcrf", "compile", "--no-segmenter"],
                       env=env, check=True, capture_output=True)
        print(f"# skcrf compile --no-segmenter in an empty cache: "
              f"{time.perf_counter() - t:.1f} s ({checkout})", flush=True)
        for corpus in args.corpora.split(","):
            for n_jobs in (1, 2):
                code = _RUN
                for name, value in (("CHECKOUT", checkout), ("BENCH", bench),
                                    ("CORPUS", corpus), ("DATA", os.path.abspath(args.data)),
                                    ("N_JOBS", n_jobs), ("MAX_ITER", args.max_iter)):
                    code = code.replace(name, repr(value))
                res = subprocess.run([sys.executable, "-c", code], env=env,
                                     capture_output=True, text=True)
                if res.returncode:
                    print(json.dumps({"corpus": corpus, "n_jobs": n_jobs,
                                      "error": res.stderr.strip().splitlines()[-1]}))
                else:
                    print(res.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
