"""The first predict after ``load_model``, against the next ones, in a new
process with a warm Numba cache.

``--fit`` fits a ``Pipeline(SequenceFeaturizer, LinearChainCRF)`` on the
bundled sample (character tags of its 900 first sentences, 30 iterations) and
saves it to ``--model``; then each run (a new process) loads it and times
``load_model``, the featurizer's first and second ``transform`` of 200
sentences, and the CRF's first and second ``predict`` of them.
``--no-preload`` makes ``load_model`` skip loading the decoding kernels (what
it did before 2026-12-07), for comparison:

    python benchmarks/dev/first_predict_after_load.py --fit
    for i in 1 2 3; do python benchmarks/dev/first_predict_after_load.py --no-preload
        python benchmarks/dev/first_predict_after_load.py; done
"""

import argparse
import os
import tempfile
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--fit", action="store_true")
ap.add_argument("--no-preload", action="store_true")
ap.add_argument("--model",
                default=os.path.join(tempfile.gettempdir(), "skcrf_first_predict.skcrf"))
args = ap.parse_args()


def _tags(words):
    return [t for w in words
            for t in (["S"] if len(w) == 1 else ["B"] + ["M"] * (len(w) - 2) + ["E"])]


if args.fit:
    import warnings

    from sklearn.pipeline import make_pipeline

    from skcrf import LinearChainCRF, SequenceFeaturizer, save_model
    from skcrf.datasets import load_sample_cws

    sents = load_sample_cws()[:900]
    warnings.simplefilter("ignore")
    pipe = make_pipeline(SequenceFeaturizer(), LinearChainCRF(max_iter=30))
    pipe.fit([list("".join(s)) for s in sents], [_tags(s) for s in sents])
    save_model(pipe, args.model)
    print(f"saved {args.model}")
else:
    import skcrf.io._estimators  # noqa: F401  (the imports load_model makes, not timed)
    from skcrf import LinearChainCRF, load_model
    from skcrf.datasets import load_sample_cws

    X = [list("".join(s)) for s in load_sample_cws()[:200]]
    if args.no_preload:
        LinearChainCRF._load_decoding_kernels = lambda self: None

    def timed(fn):
        t = time.perf_counter()
        out = fn()
        return out, (time.perf_counter() - t) * 1e3

    pipe, t_load = timed(lambda: load_model(args.model))
    feat, crf = pipe[0], pipe[-1]
    Z, f1 = timed(lambda: feat.transform(X))
    _, f2 = timed(lambda: feat.transform(X))
    _, c1 = timed(lambda: crf.predict(Z))
    _, c2 = timed(lambda: crf.predict(Z))
    print(f"{'without' if args.no_preload else 'with'} the kernels loaded by load_model: "
          f"load_model {t_load:.0f} ms; transform first {f1:.1f} / next {f2:.1f} ms; "
          f"CRF predict first {c1:.1f} / next {c2:.1f} ms")
