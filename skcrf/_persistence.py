"""Pickle / joblib support: fitted estimators hold only arrays and small metadata."""

import warnings

from ._version import __version__
from .exceptions import SkcrfVersionWarning


class VersionedPickleMixin:
    """Record the skcrf version in the pickle and warn when it differs on load."""

    def __getstate__(self):
        # a copy: on Python >= 3.11 object.__getstate__ returns the live __dict__
        state = dict(super().__getstate__())
        state["_skcrf_version"] = __version__
        return state

    def __setstate__(self, state):
        saved = state.pop("_skcrf_version", "unknown")
        if saved != __version__:
            warnings.warn(
                f"Loading a {type(self).__name__} saved with skcrf {saved} into skcrf "
                f"{__version__}: this may break or give different results. Refit "
                "the model with this version if you can.",
                SkcrfVersionWarning, stacklevel=2,
            )
        super().__setstate__(state)
