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

#: the child's record of what it compiles: ``compiled``, kernel names in order
COMPILED = """
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append(f.__module__ + "." + f.__qualname__)
event.register("numba:compile", Listener())
"""


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
from skcrf._kernels import compile_helper
from skcrf._warm_up import start_helper
from skcrf.datasets import load_sample_cws
from skcrf.segmentation import WordSegmenter
assert compile_helper.cache_is_cold()
assert start_helper("segmenter-fit", 1, stage="fit")
assert start_helper("segmenter-predict", 1, stage="predict", background=True)
""" + COMPILED + """sents = load_sample_cws()[:300]
X = ["".join(s) for s in sents]
seg = WordSegmenter(n_jobs=1, max_iter=5).fit(X, sents)
n_fit = len(compiled)
seg.predict(X[:30] + ["我们在北京大学学习自然语言处理"])
print(json.dumps([compiled[:n_fit], compiled[n_fit:]]))
"""
    in_fit, in_predict = json.loads(_run(code, tmp_path / "cache"))
    assert any(name.startswith("skcrf.feature_extraction") for name in in_fit)
    # this process compiles the optimiser's kernels (while the fit helper
    # compiles the objective's), none of the objective's or decoding's
    crf_kernels = {name for name in in_fit
                   if name.startswith(("skcrf._kernels", "skcrf._training"))}
    assert crf_kernels <= {"skcrf._training.lbfgs._update_chunk", "skcrf._training.lbfgs._dot3x2",
                           "skcrf._training.lbfgs._combine_chunk", "skcrf._training.lbfgs._axpy2",
                           "skcrf._kernels.vector._step_chunk"}
    # and its predict compiles nothing: the featurisation's transform path was
    # compiled during the fit, while the helper was still compiling
    assert [name for name in in_predict if name.startswith("skcrf.")] == []
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


# --- forked helpers, and what the waiting process compiles meanwhile ---------

@pytest.fixture
def cold(monkeypatch, no_helpers):
    """A cold cache (as far as start() can tell), no helper, nothing to do
    meanwhile."""
    monkeypatch.setattr(compile_helper, "_meanwhile", {})
    monkeypatch.setattr(compile_helper, "cache_is_cold", lambda: True)


# Elsewhere start() never forks (macOS's system libraries do not survive a fork
# without exec; Windows has none): a helper is a new interpreter there, which the
# tests above and test_no_fork_while_a_thread_runs cover on every platform.
_linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="helpers are forked on Linux only")


def needs_fork(test):
    # (marked "forks": run before any test starts Numba's threads, tests/conftest.py)
    return pytest.mark.forks(_linux_only(test))


@needs_fork
def test_a_forked_helper_runs_its_workload_and_is_waited_for(cold, tmp_path):
    done = tmp_path / "done"
    assert compile_helper.start("touch", 3, stage="fit",
                                run=lambda n_jobs: done.write_text(repr(n_jobs)))
    helper = compile_helper._helpers["fit"]
    assert isinstance(helper, compile_helper._Forked)     # no new interpreter
    compile_helper.wait("fit")
    assert helper.returncode == 0 and done.read_text() == "3"
    assert compile_helper._helpers == {}


@needs_fork
def test_a_failing_forked_helper_only_ends(cold):
    def fail(n_jobs):
        raise RuntimeError("a broken workload")

    assert compile_helper.start("fail", stage="fit", run=fail)
    helper = compile_helper._helpers["fit"]
    compile_helper.wait("fit")          # returns; this process compiles on its own
    assert helper.returncode == 1


@needs_fork
def test_a_forked_helper_is_killed_at_exit(cold):
    import time

    assert compile_helper.start("sleep", stage="predict", background=True,
                                run=lambda n_jobs: time.sleep(60))
    helper = compile_helper._helpers["predict"]
    assert helper.poll() is None and compile_helper.running("predict")
    compile_helper._stop()
    assert helper.poll() == -9
    assert compile_helper._helpers == {}


def test_no_fork_while_a_thread_runs(cold):
    # a lock held by another thread would stay held in the child forever: a
    # new interpreter instead (here it fails at once: skcrf._warm_up has no
    # workload of that name; the caller only compiles on its own)
    import threading

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert compile_helper.start("no-such-workload", stage="fit", run=lambda n_jobs: None)
        helper = compile_helper._helpers["fit"]
        assert isinstance(helper, subprocess.Popen)
        compile_helper.wait("fit")
        assert helper.returncode != 0
    finally:
        stop.set()
        thread.join()


@needs_fork
def test_the_waiting_process_does_its_share_while_the_helper_runs(cold):
    import time

    calls = []
    assert compile_helper.start("slow", 2, stage="fit", run=lambda n_jobs: time.sleep(2),
                                meanwhile=lambda n_jobs: calls.append(n_jobs))
    assert calls == []                         # not at start: at the wait
    compile_helper.wait("fit")
    assert calls == [2] and compile_helper._meanwhile == {}
    # a helper already done when the wait comes: nothing is done meanwhile
    assert compile_helper.start("quick", stage="fit", run=lambda n_jobs: None,
                                meanwhile=lambda n_jobs: calls.append("late"))
    compile_helper._helpers["fit"].wait()
    compile_helper.wait("fit")
    assert calls == [2] and compile_helper._meanwhile == {}


@needs_fork
def test_a_failing_share_of_the_waiting_process_only_ends(cold):
    import time

    def broken(n_jobs):
        raise RuntimeError("a broken warm-up")

    assert compile_helper.start("slow", stage="fit", run=lambda n_jobs: time.sleep(1),
                                meanwhile=broken)
    helper = compile_helper._helpers["fit"]
    compile_helper.wait("fit")          # no error: the fit compiles on its own
    assert helper.returncode == 0 and compile_helper._meanwhile == {}


def test_the_optimizer_kernels_compile_what_a_fit_runs(tmp_path):
    # what the waiting process compiles meanwhile is what a fit's optimiser
    # then loads: a fit after it compiles none of the optimiser's kernels
    code = """
import json
import numpy as np
from skcrf._warm_up import optimizer_kernels
""" + COMPILED + """optimizer_kernels(None)
n = len(compiled)
from skcrf import LinearChainCRF
rng = np.random.default_rng(0)
X = [rng.random((int(k), 5)) for k in rng.integers(1, 9, size=40)]
y = [list(rng.choice(["a", "b", "c", "d"], size=len(x))) for x in X]
LinearChainCRF(max_iter=20).fit(X, y)
print(json.dumps([compiled[:n], compiled[n:]]))
"""
    ahead, in_fit = json.loads(_run(code, tmp_path / "cache"))
    assert "skcrf._training.lbfgs._combine_chunk" in ahead
    assert "skcrf._training.lbfgs._update_chunk" in ahead
    assert [k for k in in_fit if k.startswith(("skcrf._training.lbfgs",
                                               "skcrf._kernels.vector._step"))] == []
