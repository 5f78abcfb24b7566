"""``skcrf compile``: compile the kernels once (for images and workers)."""

import os

from .._warm_up import compile_kernels
from ._io import stdout

__all__ = ["cmd_compile"]


def cmd_compile(args):
    seconds = compile_kernels(segmenter=not args.no_segmenter)
    where = os.environ.get("NUMBA_CACHE_DIR") or "the package's __pycache__ folders"
    stdout().write(f"Kernels ready in {seconds:.1f} s (cached in {where}).\n")
    return 0
