"""The "compiling kernels, first use only" notice: said once, and only when
Numba really compiles for longer than the threshold."""

import io
import logging

import numba
import numpy as np
import pytest

from skcrf import _compile_notice
from skcrf._compile_notice import MESSAGE, compile_notice


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(_compile_notice, "_said", set())
    return monkeypatch


def _new_kernel():
    # a new dispatcher each time: its first call is a real compilation
    @numba.njit(cache=False)
    def kernel(x):
        return x.sum() * 2.0
    return kernel


def test_said_once_when_compiling_takes_long(fresh, caplog):
    fresh.setattr(_compile_notice, "_THRESHOLD", 0.0)
    stream = io.StringIO()
    with caplog.at_level(logging.INFO, logger="skcrf"), compile_notice(stream):
        _new_kernel()(np.ones(3))
        _new_kernel()(np.ones(3))
    assert stream.getvalue() == MESSAGE + "\n"
    assert [r.getMessage() for r in caplog.records] == [MESSAGE]
    with compile_notice(stream):             # once per process
        _new_kernel()(np.ones(3))
    assert stream.getvalue() == MESSAGE + "\n"


def test_nested_blocks_print_to_the_outer_stream(fresh, caplog):
    # skcrf demo: the command line prints to stderr around WordSegmenter.fit,
    # whose own block (not verbose) only logs; the inner block announcing first
    # must not keep the outer one from printing
    fresh.setattr(_compile_notice, "_THRESHOLD", 0.0)
    stream = io.StringIO()
    with caplog.at_level(logging.INFO, logger="skcrf"), compile_notice(stream):
        with compile_notice(None):
            _new_kernel()(np.ones(3))
    assert stream.getvalue() == MESSAGE + "\n"
    assert [r.getMessage() for r in caplog.records] == [MESSAGE]


def test_silent_when_compiling_is_short_or_absent(fresh):
    fresh.setattr(_compile_notice, "_THRESHOLD", 3600.0)
    stream = io.StringIO()
    kernel = _new_kernel()
    with compile_notice(stream):
        kernel(np.ones(3))                   # compiles, but well under an hour
    fresh.setattr(_compile_notice, "_THRESHOLD", 0.0)
    with compile_notice(stream):
        kernel(np.ones(3))                   # already compiled: no event at all
    assert stream.getvalue() == ""


def test_listener_removed_after_the_block(fresh):
    from numba.core import event

    before = len(event._registered["numba:compile"])
    with compile_notice(io.StringIO()):
        assert len(event._registered["numba:compile"]) == before + 1
    assert len(event._registered["numba:compile"]) == before


def test_a_verbose_fit_says_it(fresh, capsys):
    from skcrf import LinearChainCRF

    fresh.setattr(_compile_notice, "_THRESHOLD", 0.0)
    X = [np.eye(2)[[0, 1]]]
    y = [["a", "b"]]
    # whether the fit's kernels compile depends on the cache: force a compilation
    import skcrf._crf as crf_module

    real = crf_module.compile_notice

    def forcing(stream):
        ctx = real(stream)

        class Wrapped:

            def __enter__(self):
                ctx.__enter__()
                _new_kernel()(np.ones(2))

            def __exit__(self, *exc):
                return ctx.__exit__(*exc)
        return Wrapped()

    fresh.setattr(crf_module, "compile_notice", forcing)
    LinearChainCRF(max_iter=2, verbose=1).fit(X, y)
    assert MESSAGE in capsys.readouterr().err


def test_compile_command(capsys):
    from skcrf.cli import main

    assert main(["compile", "--no-segmenter"]) == 0
    assert capsys.readouterr().out.startswith("Kernels ready in ")
