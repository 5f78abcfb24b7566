"""Helpers shared by the benchmark scripts (run them from any directory:
each script puts ``benchmarks/`` on ``sys.path``, so ``import _common`` works).

* the machine line every result file starts with;
* peak-RSS measurement of a block (``reset_peak_rss`` / ``vm_hwm_mb``) and
  ``timed_fit``;
* the first-call cost of the compiled kernels;
* the CoNLL-2002 problem of ``bench_conll2002.py`` (the sklearn-crfsuite
  tutorial features, read with the package's reader, vectorised once);
* running one engine in a child process and reading its JSON line.
"""

import gc
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data")


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


# ------------------------------------------------------------------- memory
def reset_peak_rss():
    """Restart the kernel's peak-RSS counter (VmHWM) at the current RSS (Linux >= 4.0),
    after returning the C heap's free memory to the OS (glibc ``malloc_trim``):
    otherwise memory that earlier work freed but left resident (loading data,
    compiling) would be reused by the measured call without showing in its peak,
    to the benefit of whichever engine happened to leave more of it."""
    from skcrf._training.loss import trim_heap

    trim_heap()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _status_mb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def vm_hwm_mb():
    """Peak resident set size (MB) since the last ``reset_peak_rss``."""
    return _status_mb("VmHWM")


def vm_rss_mb():
    """Current resident set size (MB)."""
    return _status_mb("VmRSS")


def timed_fit(model, X, y):
    """Fit ``model`` and return ``{"fit_s", "fit_peak_rss_mb", "rss_before_fit_mb"}``:
    wall time, and the RSS high-water mark reset just before the fit (so it
    includes the input already in memory) with the RSS it started from."""
    gc.collect()
    reset_peak_rss()
    before = vm_rss_mb()
    t = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - t
    return {"fit_s": fit_s, "fit_peak_rss_mb": vm_hwm_mb(), "rss_before_fit_mb": before}


def first_and_best(fn, repeats=5):
    """Seconds of a first call of ``fn()`` and the best of ``repeats`` more
    (``inf`` when ``repeats`` is 0): e.g. the first ``predict`` after a fit,
    its inputs and weights not yet in the processor's caches, and a warm one."""
    t = time.perf_counter()
    fn()
    first = time.perf_counter() - t
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return first, best


def first_call():
    """Seconds of the first fit + predict in a process (Numba compiles or loads
    its cache), serial and parallel kernels; and of the import before it."""
    t = time.perf_counter()
    import numpy as np

    from skcrf import LinearChainCRF

    t_import = time.perf_counter() - t
    t = time.perf_counter()
    LinearChainCRF().fit([np.eye(2)], [["a", "b"]]).predict([np.eye(2)])
    LinearChainCRF(n_jobs=2).fit([np.eye(2)] * 2, [["a", "b"]] * 2).predict(
        [np.eye(2)] * 2)
    return t_import, time.perf_counter() - t


# --------------------------------------------------------- the CoNLL problem
def word2features(sent, i):
    """The sklearn-crfsuite tutorial features of token i of ``sent``, a list
    of (word, pos) tuples."""
    word, postag = sent[i][0], sent[i][1]
    f = {
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
        "postag": postag,
        "postag[:2]": postag[:2],
    }
    if i > 0:
        w1, p1 = sent[i - 1][0], sent[i - 1][1]
        f.update({"-1:word.lower()": w1.lower(), "-1:word.istitle()": w1.istitle(),
                  "-1:word.isupper()": w1.isupper(), "-1:postag": p1,
                  "-1:postag[:2]": p1[:2]})
    else:
        f["BOS"] = True
    if i < len(sent) - 1:
        w1, p1 = sent[i + 1][0], sent[i + 1][1]
        f.update({"+1:word.lower()": w1.lower(), "+1:word.istitle()": w1.istitle(),
                  "+1:word.isupper()": w1.isupper(), "+1:postag": p1,
                  "+1:postag[:2]": p1[:2]})
    else:
        f["EOS"] = True
    return f


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def load_conll2002(data, limit=None, test="esp.testb"):
    """Tutorial feature dicts and tags of esp.train (first ``limit`` sentences)
    and of the test file."""
    from skcrf.datasets import read_conll

    Xtr, ytr = read_conll(os.path.join(data, "esp.train"))
    Xte, yte = read_conll(os.path.join(data, test))
    Xtr, ytr = Xtr[:limit], ytr[:limit]
    return ([sent2features(s) for s in Xtr], ytr, [sent2features(s) for s in Xte], yte)


def vectorise(train_feats, test_feats):
    """CRFsuite's attribute convention: str values become 'key:value' = 1."""
    from sklearn.feature_extraction import DictVectorizer

    from skcrf import Sequences

    dv = DictVectorizer(separator=":")
    flat = lambda fs: [d for seq in fs for d in seq]  # noqa: E731
    Xtr = dv.fit_transform(flat(train_feats))
    Xte = dv.transform(flat(test_feats))
    return (Sequences(Xtr, [len(s) for s in train_feats]),
            Sequences(Xte, [len(s) for s in test_feats]))


# --------------------------------------------------------------- processes
def run_json_child(cmd, extra_env=None):
    """Run ``cmd``; return the JSON object on the last line of its output."""
    env = dict(os.environ, **(extra_env or {}))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"child failed: {' '.join(cmd)}")
    return json.loads(res.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------- checkouts
#: where a module lives in each layout of the package (A/B tools compare
#: checkouts from before and after the re-cut into subpackages)
LAYOUTS = {
    "loss": ("_training.loss", "_objective"),
    "layout": ("_training.layout", "_layout"),
    "parallel": ("_kernels.parallel", "_parallel"),
}


def skcrf_module(package, what):
    """Module ``what`` (a key of :data:`LAYOUTS`) of the skcrf package named
    ``package`` (``"skcrf"``, or an A/B tool's renamed copy)."""
    import importlib

    for path in LAYOUTS[what]:
        try:
            return importlib.import_module(f"{package}.{path}")
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(f"{package} has none of {LAYOUTS[what]}")
