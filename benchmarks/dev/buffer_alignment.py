"""What the start of the weight and gradient buffers within a cache line
costs: one objective evaluation, the same code and problem, with the
buffers placed 0, 16 or 48 bytes into a 64-byte line, evaluations
alternating.

NumPy aligns its allocations to 16 bytes only, and where a large array
starts within its first line depends on the allocator's history: before
2026-12-07 the objective's state weights and each thread's gradient started
wherever ``np.zeros`` put them. A row of 16 float64 (15-16 labels) then
spanned two cache lines or three, and every quad of it could straddle two,
by chance of the run. ``skcrf._arrays.aligned_zeros`` now places them on a
line; this script shows what the other placements cost.

    python benchmarks/dev/buffer_alignment.py --corpus gsd-upos --threads 1
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "claims")]

OFFSETS = (0, 16, 48)


def placed_zeros(shape, offset):
    """Zeros of ``shape`` whose data start ``offset`` bytes into a cache line."""
    n = int(np.prod(shape))
    buf = np.zeros(n + 16)
    start = (-buf.ctypes.data % 64 + offset) // 8
    out = buf[start:start + n].reshape(shape)
    assert out.ctypes.data % 64 == offset
    return out


def main():
    from _common import machine
    from _corpora import LABELS, build

    from skcrf._kernels.parallel import numba_threads
    from skcrf._training.layout import build_layout, count_pairs
    from skcrf._training.loss import CRFLoss

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="gsd-upos", choices=list(LABELS))
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "..", "shared", "data"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()

    Xtr, ytr, _, _, _ = build(args.corpus, args.data, args.limit)
    classes, y = np.unique(np.concatenate([np.asarray(s) for s in ytr]),
                           return_inverse=True)
    y = y.astype(np.int32).reshape(-1)
    arrays, w = Xtr.kernel_arrays(), np.ones(len(Xtr))
    counts = count_pairs(arrays, y, w, classes.size, Xtr.n_features)
    layout = build_layout(counts, all_possible_transitions=False, start_end=False)
    theta = np.random.default_rng(0).normal(scale=0.1, size=layout.n_params)
    losses = {}
    for offset in OFFSETS:
        loss = CRFLoss(arrays, y, w, layout, counts, n_threads=args.threads)
        W, gW = loss._buffers()
        if loss.compact:
            sys.exit(f"{args.corpus}: compact state weights (records); this script "
                     "places dense matrices")
        # the same shapes as the package allocates (rows rounded to whole lines,
        # so every thread's gradient starts where the first does)
        loss._W = placed_zeros(W.shape, offset)
        loss._gW = placed_zeros(gW.shape, offset)
        losses[offset] = loss
    times = {k: [] for k in losses}
    values = {}
    with numba_threads(args.threads):
        for k, loss in losses.items():
            values[k] = loss.loss_gradient(theta, 1.0)
        for _ in range(args.reps):
            for k, loss in losses.items():
                t = time.perf_counter()
                loss.loss_gradient(theta, 1.0)
                times[k].append(time.perf_counter() - t)
    f0, g0 = values[0]
    same = all(values[k][0] == f0 and np.array_equal(values[k][1], g0) for k in values)
    L, width = classes.size, losses[0]._W.shape[1]
    print(f"# {args.corpus}: {L} labels, rows of {width} float64, {args.threads} thread(s), "
          f"{args.reps} rounds, evaluations alternating — {machine()}")
    print(f"# the same objective and gradient, bit for bit, at every placement: {same}")
    base = np.median(times[0])
    for k, ts in times.items():
        print(f"buffers {k:2d} bytes into a line: median {np.median(ts) * 1e3:.1f} ms, "
              f"best {min(ts) * 1e3:.1f} ms ({np.median(ts) / base:.2f}x)")


if __name__ == "__main__":
    main()
