"""Exceptions and warnings that skcrf raises (besides ``ValueError`` /
``TypeError`` for bad arguments and scikit-learn's ``NotFittedError`` and
``ConvergenceWarning``).

Pure Python: importable from every layer.
"""

__all__ = ["ModelFileError", "TemplateError", "SkcrfVersionWarning"]


class ModelFileError(ValueError):
    """A file that cannot be loaded as a model: missing, truncated, corrupted,
    another format, or inconsistent. The message names the file and, where
    it can, the entry that is wrong."""


class TemplateError(ValueError):
    """A malformed CRF++ template or data line; the message names the file and line."""


class SkcrfVersionWarning(UserWarning):
    """A model was pickled by another skcrf version than the one loading it."""
