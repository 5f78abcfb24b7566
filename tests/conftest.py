import numpy as np
import pytest


def pytest_collection_modifyitems(config, items):
    """Tests marked ``forks`` first, whatever the selection: a helper is forked
    only from a process in which Numba's worker threads have not started
    (``skcrf._kernels.compile_helper._fork``), and any test running a kernel on
    two threads starts them for the rest of the session. (A stable sort: the
    order is otherwise unchanged.)"""
    items.sort(key=lambda item: item.get_closest_marker("forks") is None)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
