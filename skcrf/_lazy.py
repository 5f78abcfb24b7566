"""Public names of a package, imported on first use.

``import skcrf`` and the NumPy-only runtime of model files (which imports
modules of :mod:`skcrf.feature_extraction`, :mod:`skcrf.segmentation` and
:mod:`skcrf.io`) must not pay for scikit-learn, SciPy or Numba. So package
``__init__`` modules list their public names here instead of importing
them: the defining module is imported when a name is first looked up.
"""

from importlib import import_module

__all__ = ["lazy_exports"]


def lazy_exports(package, table):
    """``(__all__, __getattr__, __dir__)`` for ``package`` exporting the names
    of ``table`` (name -> relative module that defines it)."""
    namespace = import_module(package).__dict__

    def __getattr__(name):
        if name in table:
            value = getattr(import_module(table[name], package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(table))

    return sorted(table), __getattr__, __dir__
