"""The ``skcrf`` command line (also ``python -m skcrf``): CRF++-style files in and out.

    skcrf train -t TEMPLATE -m MODEL [options] FILE...   train on column data
    skcrf train --format segmented -m MODEL FILE...      train a word segmenter
    skcrf tag -m MODEL [-v1|-v2] [-n N] [FILE...]        label column data (stdin if none)
    skcrf segment -m MODEL [FILE...]                     raw text -> space-separated words
    skcrf eval [--scheme BIO] FILE...                    gold + predicted columns -> spans
    skcrf eval --format segmented GOLD PRED [--train F]  word segmentation scores
    skcrf dump -m MODEL [-k N]                           transitions and top features
    skcrf demo                                           train and score on the bundled sample

Owns the command line: the parser (``_parser``: every option with its help,
default and checks), the run of one command (``_main``: exit statuses, Ctrl-C
and SIGTERM, closed streams), reading input files (``_io``: encodings, errors
naming the file and line), and one module per command, imported only when
that command runs: ``_tag`` (tag, segment), ``_train``, ``_eval``, ``_dump``,
``_demo``.

May import: everything below it (``skcrf.io``, the estimators, metrics,
datasets). ``__init__``, ``_main``, ``_parser``, ``_io`` and ``_tag`` import
NumPy at most, so that ``skcrf tag`` starts without SciPy, scikit-learn or
Numba (``tests/test_architecture.py``).

Errors in user input (files, templates, options, model files) end with exit
status 2 and one line on stderr naming the file and line; no traceback.
"""

from ._main import main

__all__ = ["main"]
