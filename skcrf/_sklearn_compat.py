"""The one module that imports scikit-learn's private helpers.

When scikit-learn moves them, only this file changes.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
                                             Interval,
                                             InvalidParameterError,
                                             StrOptions,
                                             validate_params,
)

__all__ = ["_fit_context", "Interval", "InvalidParameterError", "StrOptions", "validate_params"]
