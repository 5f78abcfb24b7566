"""Model files and data files: reading and writing what lives outside Python.

Owns the skcrf model file format (``_model_file``: plain arrays and JSON,
never pickle), the runtime that tags with a model file without
scikit-learn (``_model``: :class:`Model`, :func:`read_model`), the
conversion between model files and fitted estimators (``_estimators``:
:func:`save_model`, :func:`load_model`), and CRF++ column data (``_columns``).

May import: the base modules, :mod:`skcrf._inference`,
:mod:`skcrf.feature_extraction`, :mod:`skcrf.segmentation` and (in
``_estimators`` only) the estimators. ``_model_file``, ``_model`` and
``_columns`` import NumPy at most: ``skcrf tag`` starts without SciPy,
scikit-learn or Numba (``tests/test_architecture.py`` checks it).
"""

from .._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "save_model": "._estimators",
    "load_model": "._estimators",
    "read_model": "._model",
    "Model": "._model",
    "ModelFileError": "..exceptions",
})
