"""Code shared by the tests that run a probe script in a new process."""

#: ``signatures()`` for a probe: every skcrf kernel's compiled signatures,
#: ``{"module.function": {signature, ...}}``; a call that compiled or loaded a
#: kernel for new argument types adds one
SIGNATURES = r'''
import sys
from numba.core.registry import CPUDispatcher


def signatures():
    out = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("skcrf"):
            for value in list(vars(module).values()):
                if isinstance(value, CPUDispatcher):
                    f = value.py_func
                    out[f"{f.__module__}.{f.__qualname__}"] = set(map(str, value.signatures))
    return out
'''
