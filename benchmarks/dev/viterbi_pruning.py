"""How many previous labels Viterbi's pruned steps keep, and what the pruned
lanes save, on the corpora of the label sweep.

For each corpus: a model fitted as the sweep fits it (``--max-iter``
iterations), then on its test split

1. the share of previous labels the bound of
   ``skcrf._kernels.decode_pruned`` keeps per step: in one sequence alone,
   and in a batch of eight lanes (a label counts when some lane keeps it),
   recomputed in NumPy from each sequence's Viterbi scores;
2. the decoding kernel alone, one thread, on the same arrays: the narrow
   kernel's full lane steps (``decode._viterbi_chunk``) against the pruned
   kernel (``decode_pruned._viterbi_pruned_chunk``), nanoseconds per token,
   best of ``--reps`` alternating calls, and whether both give the same
   labels and scores.

    python benchmarks/dev/viterbi_pruning.py --data ../shared/data \\
        --corpora ner-bio,gsd-upos,ner-bioes,gsd-xpos,esp-pos,synth-100,synth-200
"""

import argparse
import os
import sys
import time
import warnings
from datetime import date

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, ".."), os.path.join(here, "..", "claims")]
warnings.simplefilter("ignore")

from _common import DEFAULT_DATA, machine  # noqa: E402
from _corpora import build  # noqa: E402
from bench_label_sweep import LIMITS  # noqa: E402

from skcrf import LinearChainCRF  # noqa: E402
from skcrf._kernels import inference as kernels  # noqa: E402
from skcrf._kernels.decode import _viterbi_chunk  # noqa: E402
from skcrf._kernels.decode_pruned import _viterbi_pruned_chunk  # noqa: E402
from skcrf._kernels.parallel import order_by_length  # noqa: E402


def kept_shares(E, offsets, A, start, order):
    """(alone, lanes): shares of the previous labels the bound keeps per step,
    one sequence alone and eight lanes together (batches in ``order``)."""
    L = A.shape[0]
    rowmax, rowmin = A.max(axis=1), A.min(axis=1)
    keeps = []
    for s in range(offsets.size - 1):
        e = E[offsets[s]:offsets[s + 1]]
        S = np.empty_like(e)
        if len(e):
            S[0] = e[0] + start
        for t in range(1, len(e)):
            S[t] = (S[t - 1][:, None] + A).max(axis=0) + e[t]
        keeps.append(S[:-1] + rowmax >= (S[:-1] + rowmin).max(axis=1, keepdims=True))
    alone = sum(k.sum() for k in keeps) / (L * sum(len(k) for k in keeps))
    order = [s for s in order if offsets[s + 1] > offsets[s]]
    kept = steps = 0
    for i in range(0, len(order), 8):
        batch = [keeps[s] for s in order[i:i + 8]]
        for t in range(max(len(k) for k in batch)):
            kept += np.logical_or.reduce([k[t] for k in batch if t < len(k)]).sum()
            steps += 1
    return alone, kept / (L * steps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--corpora", default="ner-bio,gsd-upos,ner-bioes,gsd-xpos,esp-pos,"
                                         "synth-100,synth-200")
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    print(f"# Viterbi's pruned steps, {date.today()}, {machine()}; models fitted in "
          f"{args.max_iter} iterations (c2=1, seen transitions, no start / end weights)")
    print("| corpus | labels | kept alone | kept by 8 lanes | full lanes ns/token | "
          "pruned ns/token | pruned / full | same |")
    print("|---|---|---|---|---|---|---|---|")
    for corpus in args.corpora.split(","):
        Xtr, ytr, Xte, _, _ = build(corpus, args.data, LIMITS[corpus])
        model = LinearChainCRF(c2=1.0, max_iter=args.max_iter, all_possible_transitions=False,
                               start_end_transitions=False).fit(Xtr, ytr)
        weights = model._weights()
        arrays = model._arrays(Xte)
        L = weights.n_labels
        kw = kernels._kernel_weights(weights)
        bounds = np.array([0, arrays.n_sequences], dtype=np.int64)
        order = order_by_length(arrays.offsets, bounds)
        E = Xte.X @ weights.W[:, :L]
        alone, lanes = kept_shares(np.asarray(E), arrays.offsets, weights.A, weights.start,
                                   order)

        def run(chunk, w):
            out = np.zeros(arrays.n_tokens, dtype=np.int64)
            best = np.zeros(arrays.n_sequences)
            t = time.perf_counter()
            chunk(0, bounds, order, *arrays, *w, out, best)
            return time.perf_counter() - t, out, best

        # (the pruned kernel takes wide rows as a matrix: no quad-row view)
        _, out_a, best_a = run(_viterbi_chunk, kw)
        _, out_b, best_b = run(_viterbi_pruned_chunk, weights)
        same = np.array_equal(out_a, out_b) and np.array_equal(best_a, best_b)
        full = pruned = np.inf
        for _ in range(args.reps):
            full = min(full, run(_viterbi_chunk, kw)[0])
            pruned = min(pruned, run(_viterbi_pruned_chunk, weights)[0])
        n = arrays.n_tokens
        print(f"| {corpus} | {L} | {alone:.3f} | {lanes:.3f} | {full * 1e9 / n:.0f} | "
              f"{pruned * 1e9 / n:.0f} | {pruned / full:.2f} | {same} |", flush=True)


if __name__ == "__main__":
    main()
