"""Cached parallel kernels keep working when the thread count changes
(pynndescent saw crashes there: its PR #175)."""

import os
import pathlib
import subprocess
import sys

CODE = """
import numpy as np
from skcrf import LinearChainCRF
rng = np.random.default_rng(0)
X = [rng.random((int(rng.integers(1, 9)), 5)) for _ in range(40)]
y = [list(rng.choice(["a", "b", "c"], size=len(x))) for x in X]
crf = LinearChainCRF(n_jobs=-1).fit(X, y)
print(round(crf.objective_, 8), sum(map(len, crf.predict(X))))
"""


def test_cache_shared_by_processes_with_different_thread_counts(tmp_path):
    # the suite's own cache when it has one (CI sets NUMBA_CACHE_DIR): its
    # parallel kernels were compiled by this process's thread count and are
    # loaded here under others, which is the case to test, without paying a
    # second cold compilation; a fresh directory otherwise
    cache = os.environ.get("NUMBA_CACHE_DIR") or str(tmp_path)
    outs = []
    for n in ("2", "1", "2"):
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_NUM_THREADS=n)
        res = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True,
                             text=True, timeout=600)
        assert res.returncode == 0, res.stderr
        outs.append(res.stdout.split())
    objectives = [float(o[0]) for o in outs]
    assert max(objectives) - min(objectives) <= 1e-6 * abs(objectives[0])
    assert len({o[1] for o in outs}) == 1
    assert any(pathlib.Path(cache).rglob("*.nbi"))  # the cache was really used


def test_unusable_cache_directory_does_not_break_import_or_fit(tmp_path):
    # a cache path that cannot be created (its parent is a file) stands for a
    # read-only install: root ignores permission bits, so chmod cannot show it
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(blocker / "cache"))
    res = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.split()) == 2
