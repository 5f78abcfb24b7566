"""Training on a Dask cluster: what an evaluation costs, measured here, and a
model of a 16-machine cluster built from those measurements.

On a ``LocalCluster`` of 2 worker processes (1 thread each) on this 2-core
machine, for SXU (raw training text, ``SequenceFeaturizer()``, BMES tags) and
a 10^6-token synthetic corpus of two-column tokens generated on the workers:

* time per evaluation of the objective (loss + gradient) distributed, against
  the same evaluation run locally on the whole corpus with 1 and 2 threads;
* the overhead of one distributed evaluation alone (scatter the weights,
  schedule one task per partition, tree-reduce the gradients, gather): the
  same round trip with partitions that return zeros at once, at the real
  parameter count and at 10^6 and 10^7 parameters;
* bytes moved per evaluation: driver -> cluster (the weights, once), worker ->
  worker (measured by the workers' transfer counters), cluster -> driver;
* a short fit both ways (same iterations) and the objectives reached;
* the first task on a fresh worker process: tiny fit with a warm and with a
  cold Numba cache.

    pip install "skcrf[dask]"
    python benchmarks/claims/bench_dask.py --data ../shared/data/sighan2008_sxu
"""

import argparse
import os
import sys
import tempfile
import time
from datetime import date

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, machine

N_WORKERS = 2


# ----------------------------------------------------------------- corpora
def synthetic_partition(seed, n_tokens, n_words=200_000, n_labels=10):
    """Two-column tokens (word, shape) with Markov labels that depend on the word."""
    rng = np.random.default_rng(seed)
    out, made = [], 0
    while made < n_tokens:
        T = int(rng.integers(5, 45))
        words = (rng.zipf(1.2, size=T) - 1) % n_words
        labels = (words * 7 + np.arange(T) % 3) % n_labels
        noisy = rng.random(T) < 0.15
        labels[noisy] = rng.integers(0, n_labels, size=int(noisy.sum()))
        seq = [(f"w{w}", f"s{w % 97}") for w in words]
        out.append((seq, [f"L{k}" for k in labels]))
        made += T
    return out


def corpus(name, data, n_partitions):
    import dask.bag as db

    if name == "sxu":
        from skcrf.segmentation import read_segmented, words_to_tags

        sents = read_segmented(os.path.join(data, "train.txt"))
        pairs = [("".join(s), words_to_tags(s)) for s in sents]
        return db.from_sequence(pairs, npartitions=n_partitions)
    per = 1_000_000 // n_partitions
    return db.from_sequence(range(n_partitions), npartitions=n_partitions).map_partitions(
        lambda seeds: [p for s in seeds for p in synthetic_partition(int(s), per)])


# ------------------------------------------------------------- measurements
class _NullLoss:
    """A partition that returns a zero gradient at once: the round trip alone."""

    def __init__(self, n):
        self.n = n

    def loss_gradient(self, theta):
        return 0.0, np.zeros(self.n)


def _outgoing(dask_worker):
    return dask_worker.transfer_outgoing_bytes_total


def _null_terms(client, n_params, n_partitions):
    from skcrf.dask import _RemoteTerms

    workers = list(client.scheduler_info()["workers"])
    losses = [client.submit(_NullLoss, n_params, pure=False, workers=[workers[k % len(workers)]])
              for k in range(n_partitions)]
    return _RemoteTerms(client, losses)


def per_call(fn, theta, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(theta)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def measure_corpus(client, name, data, n_partitions, max_iter):
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline

    from skcrf import LinearChainCRF, SequenceFeaturizer
    from skcrf._training.loss import CRFLoss
    from skcrf.dask import fit_pipeline

    bag = corpus(name, data, n_partitions).persist()
    pairs = bag.compute()
    X, y = [p[0] for p in pairs], [p[1] for p in pairs]
    n_tokens = sum(len(s) for s in y)
    pipe = make_pipeline(SequenceFeaturizer(),
                         LinearChainCRF(c2=1.0, max_iter=max_iter, n_jobs=-1))

    # distributed fit (max_iter iterations)
    before = sum(client.run(_outgoing).values())
    t = time.perf_counter()
    dist = fit_pipeline(clone(pipe), bag, client=client)
    t_dist_fit = time.perf_counter() - t
    w2w = sum(client.run(_outgoing).values()) - before
    crf = dist[-1]
    n_params = crf.n_params_
    stats = crf.dask_stats_

    # local fit, same iterations
    t = time.perf_counter()
    local = clone(pipe).fit(X, y)
    t_local_fit = time.perf_counter() - t

    # one evaluation, local, whole corpus, at random weights
    from skcrf._constraints import constraint_masks
    from skcrf._training.layout import count_pairs

    S = local[0].transform(X)
    arrays = S.kernel_arrays()
    classes = local[-1].classes_
    yi = np.searchsorted(classes, np.concatenate([np.asarray(s) for s in y])).astype(np.int32)
    w = np.ones(len(y))
    counts = count_pairs(arrays, yi, w, classes.size, S.n_features)
    layout = local[-1]._layout(counts, constraint_masks(local[-1].constraints, classes))
    theta = np.random.default_rng(0).normal(scale=0.05, size=layout.n_params)
    local_eval = {}
    for threads in (1, 2):
        loss = CRFLoss(arrays, yi, w, layout, counts, n_threads=threads)
        loss.loss_gradient(theta)
        local_eval[threads] = per_call(loss.loss_gradient, theta, 5)
    del S, arrays, loss

    null = per_call(_null_terms(client, n_params, n_partitions), np.zeros(n_params), 7)
    return {
        "name": name, "tokens": n_tokens, "sequences": len(y), "params": n_params,
        "partitions": n_partitions,
        "dist_eval_s": stats["seconds"] / stats["evaluations"],
        "dist_evals": stats["evaluations"], "dist_fit_s": t_dist_fit,
        "dist_objective": crf.objective_, "local_objective": local[-1].objective_,
        "local_fit_s": t_local_fit, "local_iters": local[-1].n_iter_,
        "dist_iters": crf.n_iter_,
        "local_eval_1": local_eval[1], "local_eval_2": local_eval[2],
        "null_eval_s": null, "w2w_bytes_per_eval": w2w / stats["evaluations"],
        "out_bytes_per_eval": 8 * n_params, "in_bytes_per_eval": 8 * (n_params + 1),
    }


def _tiny_fit():
    t = time.perf_counter()
    from skcrf import LinearChainCRF, SequenceFeaturizer
    from skcrf.datasets import load_sample_cws
    from skcrf.segmentation import words_to_tags

    t_import = time.perf_counter() - t
    sents = load_sample_cws()[:20]
    f = SequenceFeaturizer()
    LinearChainCRF(max_iter=3).fit(f.fit_transform(["".join(s) for s in sents]),
                                   [words_to_tags(s) for s in sents]).predict(
        f.transform(["".join(sents[0])]))
    return t_import, time.perf_counter() - t


def first_task(cache_dir):
    from distributed import Client, LocalCluster

    env = {"NUMBA_CACHE_DIR": cache_dir} if cache_dir else {}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40, env=env) as cluster, \
            Client(cluster) as client:
        t = time.perf_counter()
        t_import, t_task = client.submit(_tiny_fit, pure=False).result()
        return t_import, t_task, time.perf_counter() - t


def main():
    import warnings

    warnings.simplefilter("ignore")      # ConvergenceWarning: the fits stop at --max-iter
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "sighan2008_sxu"))
    ap.add_argument("--max-iter", type=int, default=30)
    ap.add_argument("--only", nargs="*", default=["sxu", "synthetic"])
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    from skcrf.dask import warm_up

    print(f"# skcrf.dask on a LocalCluster of {N_WORKERS} worker processes x 1 thread — "
          f"{date.today()} — {machine()}", flush=True)
    _tiny_fit()   # the driver's own kernels (and a warm cache for the workers)
    rows = []
    with LocalCluster(n_workers=N_WORKERS, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        warm_up(client)
        for name in args.only:
            r = measure_corpus(client, name, args.data, 2 * N_WORKERS, args.max_iter)
            rows.append(r)
        nulls = {}
        for n in (1_000_000, 10_000_000):
            nulls[n] = per_call(_null_terms(client, n, 2 * N_WORKERS), np.zeros(n), 5)
    print("\n| corpus | tokens | parameters | local eval 1 thread s | local eval 2 threads s | "
          "distributed eval s (2 workers x 1 thread) | overhead alone s | worker-to-worker "
          "MB / eval | driver out / in MB / eval | fit: local / distributed s "
          f"({args.max_iter} iterations) | objective rel. diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rel = (r["dist_objective"] - r["local_objective"]) / abs(r["local_objective"])
        print(f"| {r['name']} | {r['tokens']:,} | {r['params']:,} | {r['local_eval_1']:.3f} | "
              f"{r['local_eval_2']:.3f} | {r['dist_eval_s']:.3f} | {r['null_eval_s']:.3f} | "
              f"{r['w2w_bytes_per_eval'] / 1e6:.1f} | {r['out_bytes_per_eval'] / 1e6:.1f} / "
              f"{r['in_bytes_per_eval'] / 1e6:.1f} | {r['local_fit_s']:.1f} / "
              f"{r['dist_fit_s']:.1f} | {rel:+.1e} |", flush=True)
    for n, s in nulls.items():
        print(f"# round trip alone (4 partitions returning zeros) at {n:,} parameters: "
              f"{s * 1e3:.0f} ms")
    for label, cache in (("warm cache", None), ("cold cache", tempfile.mkdtemp())):
        t_import, t_task, wall = first_task(cache)
        print(f"# first task on a fresh worker, {label}: import {t_import:.2f} s, task "
              f"{t_task:.2f} s (incl. import), submit -> result {wall:.2f} s", flush=True)
    model(rows, nulls)


def model(rows, nulls):
    """A 16-machine cluster on 10^9 tokens, from the measured costs above."""
    syn = next((r for r in rows if r["name"] == "synthetic"), rows[0])
    per_token = syn["local_eval_1"] / syn["tokens"]           # s per token per thread
    # round trip: a + b * params, from the two measured points
    (n1, s1), (n2, s2) = sorted(nulls.items())
    b = (s2 - s1) / (n2 - n1)
    a = s1 - b * n1
    lbfgsb = {1_000_000: 0.121, 10_000_000: 1.516}            # results/lbfgsb_overhead.txt
    print("\n# Model (not measured): 16 machines x 32 cores, 10^9 tokens, 10 labels, "
          f"compute {per_token * 1e9:.0f} ns per token per thread (measured here, "
          f"{syn['name']}), 80 % parallel efficiency; round trip {a * 1e3:.0f} ms + "
          f"{b * 1e9:.2f} ns per parameter on this machine's loopback, scaled by 8 for "
          "a 10 Gb/s network (1.25 GB/s against the ~10 GB/s loopback) and by log2(16) = 4 "
          "reduction levels")
    print("| parameters | shard compute s | broadcast + reduce s | L-BFGS-B step s | "
          "s / iteration | share not in compute |\n|---|---|---|---|---|---|")
    for n in (1_000_000, 10_000_000):
        compute = 1e9 * per_token / (16 * 32 * 0.8)
        comm = a + b * n * 8 * 4
        step = lbfgsb[n]
        total = compute + comm + step
        print(f"| {n:,} | {compute:.2f} | {comm:.2f} | {step:.2f} | {total:.2f} | "
              f"{(comm + step) / total:.0%} |")


if __name__ == "__main__":
    main()
