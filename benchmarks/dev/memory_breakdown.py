"""Where the memory a fit adds goes, on a corpus of the label sweep.

The corpus as ``bench_label_sweep.py`` builds it (same features, c2=1, seen
transitions, no start / end weights), a 3-iteration warm-up fit, then a fit
of ``--max-iter`` iterations, with the peak RSS reset just before it, as the
sweep measures it. Printed:

1. the RSS and its high-water mark above the fit's starting RSS at marks
   during the fit (before and after the objective's set-up, after some
   evaluations, after the fit): where the peak is reached;
2. the arrays the objective (``CRFLoss``) holds after its second evaluation,
   largest first;
3. the NumPy allocations alive after the twelfth evaluation (tracemalloc;
   Numba's own allocations are not traced), by the line that made them.

    python benchmarks/dev/memory_breakdown.py --corpus esp-pos --n-jobs 1
"""

import argparse
import gc
import os
import sys
import tracemalloc
import warnings

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(1, os.path.join(here, "..", "claims"))
warnings.simplefilter("ignore")

from _common import DEFAULT_DATA, reset_peak_rss, vm_hwm_mb, vm_rss_mb  # noqa: E402
from _corpora import build  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402

from skcrf import LinearChainCRF  # noqa: E402
from skcrf._training import loss as _loss  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--corpus", default="ner-bio")
ap.add_argument("--data", default=DEFAULT_DATA)
ap.add_argument("--n-jobs", type=int, default=1)
ap.add_argument("--max-iter", type=int, default=30)
args = ap.parse_args()

Xtr, ytr, _, _, _ = build(args.corpus, args.data, LIMITS.get(args.corpus))
kw = dict(c2=1.0, all_possible_transitions=False, start_end_transitions=False,
          n_jobs=args.n_jobs)
LinearChainCRF(max_iter=3, **kw).fit(Xtr, ytr)


def arrays_of(obj):
    """(bytes, name, shape, dtype) of the arrays reachable from ``obj``'s
    attributes (through tuples, lists, dicts and objects, 4 levels)."""
    found, seen = [], set()

    def walk(v, name, depth):
        if id(v) in seen or depth > 4:
            return
        seen.add(id(v))
        if isinstance(v, np.ndarray):
            found.append((v.nbytes, name, v.shape, v.dtype))
        elif isinstance(v, (tuple, list)):
            for j, x in enumerate(v):
                walk(x, f"{name}[{j}]", depth + 1)
        elif isinstance(v, dict):
            for j, x in v.items():
                walk(x, f"{name}.{j}", depth + 1)
        elif hasattr(v, "__dict__") and not isinstance(v, type):
            for j, x in vars(v).items():
                walk(x, f"{name}.{j}", depth + 1)

    for k, v in vars(obj).items():
        walk(v, k, 0)
    return sorted(found, key=lambda z: (-z[0], z[1]))


marks, seen = [], {}
init, call = _loss.CRFLoss.__init__, _loss.CRFLoss.__call__


def mark(what):
    marks.append((what, vm_rss_mb(), vm_hwm_mb()))


def recording_init(self, *a, **k):
    mark("objective set-up starts")
    init(self, *a, **k)
    mark("objective set up")
    seen["compact"] = self.compact


def recording_call(self, *a, **k):
    out = call(self, *a, **k)
    seen["n"] = seen.get("n", 0) + 1
    if seen["n"] in (1, 2, 5, 12, 30):
        mark(f"after evaluation {seen['n']}")
    if seen["n"] == 2:
        seen["arrays"] = arrays_of(self)
    if seen["n"] == 12:
        seen["snapshot"] = tracemalloc.take_snapshot()
    return out


_loss.CRFLoss.__init__, _loss.CRFLoss.__call__ = recording_init, recording_call
tracemalloc.start(8)
gc.collect()
reset_peak_rss()
base = vm_rss_mb()
mark("fit starts")
LinearChainCRF(max_iter=args.max_iter, **kw).fit(Xtr, ytr)
mark("fit returned")
print(f"# {args.corpus}, n_jobs={args.n_jobs}: {Xtr.n_tokens:,} tokens, {Xtr.X.nnz:,} non-zeros "
      f"(column indices {Xtr.X.indices.dtype}), {Xtr.n_features:,} features; "
      f"{'compact' if seen['compact'] else 'dense'} state weights")
print("| mark | RSS above start, MB | peak above start, MB |\n|---|---|---|")
for what, rss, hwm in marks:
    print(f"| {what} | {rss - base:.1f} | {hwm - base:.1f} |")
print("\narrays of the objective after its second evaluation (MB):")
for nb, name, shape, dtype in seen["arrays"]:
    if nb >= 1e5:
        print(f"  {nb / 1e6:7.2f}  {name} {shape} {dtype}")
print("\nNumPy allocations alive after the twelfth evaluation, by the line that made them (MB):")
root = os.path.dirname(os.path.dirname(here))
for st in seen["snapshot"].statistics("lineno")[:12]:
    fr = st.traceback[0]
    print(f"  {st.size / 1e6:7.2f}  {os.path.relpath(fr.filename, root)}:{fr.lineno}")
