"""Helper processes that compile kernels ahead on a cold cache
(skcrf._kernels.compile_helper): they start only when the cache is cold, the
waiting is said like compiling, and what they compile is what a default
WordSegmenter's fit and predict need (so this process compiles none of it)."""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from skcrf import _compile_notice
from skcrf._compile_notice import MESSAGE, compile_notice
from skcrf._kernels import compile_helper


def _run(code, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture
def no_helpers(monkeypatch):
    monkeypatch.setattr(compile_helper, "_helpers", {})
    yield compile_helper._helpers
    compile_helper._stop()


def _sleeper(seconds):
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


def test_an_empty_cache_is_cold_and_a_filled_one_is_not(tmp_path):
    code = ("from skcrf._kernels import compile_helper as h\n"
            "from skcrf._kernels.objective import _objective_chunk\n"
            "print(h.cache_is_cold())\n"
            # what the objective's cache entry needs: an index file in its place
            "open(_objective_chunk._cache._cache_file._index_path, 'wb').close()\n"
            "print(h.cache_is_cold())\n")
    assert _run(code, tmp_path / "cache").split() == ["True", "False"]


def test_no_helper_on_a_warm_cache(no_helpers, monkeypatch):
    monkeypatch.setattr(compile_helper, "cache_is_cold", lambda: False)
    assert not compile_helper.start("segmenter-fit", 1)
    assert no_helpers == {}
    compile_helper.wait()                     # nothing to wait for


def test_one_helper_per_stage(no_helpers, monkeypatch):
    monkeypatch.setattr(compile_helper, "cache_is_cold", lambda: True)
    no_helpers["fit"] = running = _sleeper(30)
    assert not compile_helper.start("segmenter-fit", 1, stage="fit")
    assert no_helpers["fit"] is running


def test_waiting_for_a_helper_is_said_like_compiling(no_helpers, monkeypatch):
    monkeypatch.setattr(_compile_notice, "_said", set())
    monkeypatch.setattr(_compile_notice, "_THRESHOLD", 0.5)
    no_helpers["fit"] = helper = _sleeper(1.5)
    stream = io.StringIO()
    with compile_notice(stream):
        compile_helper.wait("fit")
    assert helper.poll() is not None
    assert no_helpers == {}
    assert stream.getvalue() == MESSAGE + "\n"


def test_a_fit_leaves_a_running_decoding_helper_to_the_first_predict(no_helpers):
    # a cold first run: the helper compiling the decoding kernels is still at
    # it when the first fit ends; the fit returns without waiting (a second
    # fit, the segmenter's OOV model, goes on meanwhile), predict waits
    from skcrf import LinearChainCRF

    no_helpers["predict"] = helper = _sleeper(300)
    assert compile_helper.running("predict") and not compile_helper.running("fit")
    X, y = [np.eye(3), np.eye(3)[:2]], [["a", "b", "a"], ["b", "a"]]
    crf = LinearChainCRF(max_iter=2).fit(X, y)
    assert no_helpers == {"predict": helper} and helper.poll() is None
    helper.kill()
    helper.wait()
    assert not compile_helper.running("predict")
    assert len(crf.predict(X)) == 2
    assert no_helpers == {}               # predict waited for it (it had ended)


def test_a_helper_left_running_is_stopped_at_exit(no_helpers):
    no_helpers["predict"] = helper = _sleeper(60)
    compile_helper._stop()                    # what atexit runs
    assert helper.poll() is not None
    assert no_helpers == {}


def test_helpers_compile_every_crf_kernel_of_a_default_segmenter(tmp_path):
    # In an empty cache: the two helpers of `skcrf demo` run while this
    # process featurises; then its fit and predict must load every training
    # and decoding kernel from the cache, compiling none of them. A change in
    # the kernels' argument types that the helpers' synthetic problem does not
    # follow fails here (the demo would still work, only slower).
    code = """
import json
from numba.core import event
from skcrf._kernels import compile_helper
from skcrf.datasets import load_sample_cws
from skcrf.segmentation import WordSegmenter
assert compile_helper.cache_is_cold()
assert compile_helper.start("segmenter-fit", 1, stage="fit")
assert compile_helper.start("segmenter-predict", 1, stage="predict", background=True)
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append(f.__module__ + "." + f.__qualname__)
event.register("numba:compile", Listener())
sents = load_sample_cws()[:300]
X = ["".join(s) for s in sents]
seg = WordSegmenter(n_jobs=1, max_iter=5).fit(X, sents)
seg.predict(X[:30] + ["我们在北京大学学习自然语言处理"])
print(json.dumps(compiled))
"""
    compiled = json.loads(_run(code, tmp_path / "cache"))
    assert any(name.startswith("skcrf.feature_extraction") for name in compiled)
    crf_kernels = [name for name in compiled
                   if name.startswith(("skcrf._kernels", "skcrf._training"))]
    assert crf_kernels == []
    # and nothing that a 4-label problem without underflow never runs was
    # compiled at all (what a cold first run would wait for, for nothing): the
    # loops for rows of other widths, the objective's one-sequence path
    cached = {p.name.split("-")[0] for p in (tmp_path / "cache").rglob("*.nbi")}
    assert "objective._objective_chunk" in cached and "emissions._emissions_quads" in cached
    for name in ("emissions._emissions_wide", "emissions._emissions_narrow",
                 "state_counts._add_state_counts_wide",
                 "lane_forward_backward._lane_pair_counts_wide",
                 "objective._sequence_terms", "objective._deferred_terms"):
        assert name not in cached
