"""``skcrf demo``: train the default word segmenter on the bundled sample,
score it on held-out sentences, segment a few."""

import time

from .._warm_up import start_helper
from ..datasets import load_sample_cws
from ..metrics import segmentation_scores
from ..segmentation._segmenter import WordSegmenter
from ._io import stdout

__all__ = ["cmd_demo"]


def cmd_demo(args):
    # a first run: the CRF's kernels compile in helper processes while this one
    # compiles the featurisation's (the fit waits for them, then loads them)
    start_helper("segmenter-fit", args.n_jobs, stage="fit")
    start_helper("segmenter-predict", args.n_jobs, stage="predict", background=True)
    out = stdout()
    sents = load_sample_cws()
    n_test = max(1, len(sents) // 10)
    train, test = sents[:-n_test], sents[-n_test:]
    X = ["".join(s) for s in train]
    out.write(f"Bundled sample (UD Chinese GSD, CC BY-SA 4.0): {len(train)} training "
              f"sentences ({sum(map(len, X)):,} characters), {len(test)} held out.\n")
    out.flush()
    t = time.perf_counter()
    seg = WordSegmenter(n_jobs=args.n_jobs).fit(X, train)
    oov = (f"; its OOV model {seg.oov_crf_.n_iter_} iterations, "
           f"{seg.oov_featurizer_.n_features_out_:,} features" if seg.oov_crf_ else "")
    out.write(f"Trained WordSegmenter() in {time.perf_counter() - t:.1f} s "
              f"({seg.crf_.n_iter_} L-BFGS iterations, {seg.featurizer_.n_features_out_:,} "
              f"features{oov}).\n")
    pred = seg.predict(["".join(s) for s in test])
    s = segmentation_scores(test, pred, train_words=seg.train_words_)
    out.write(f"Held-out words: precision {s['precision']:.4f}  recall {s['recall']:.4f}  "
              f"F1 {s['f1']:.4f}  OOV rate {s['oov_rate']:.3f}  OOV recall "
              f"{s['oov_recall']:.4f}  IV recall {s['iv_recall']:.4f}\n")
    examples = args.sentences or ["上海市体育局召开体育宣传工作会议",
                                  "我们在北京大学学习自然语言处理，2008年买了iPhone手机。"]
    for text, words in zip(examples, seg.predict(examples)):
        out.write(f"  {text}  ->  {' / '.join(words)}\n")
    return 0
