"""Sphinx configuration of skcrf's documentation.

The stack of the scikit-learn ecosystem: numpydoc for the docstrings,
autosummary for the API reference, sphinx-gallery to run ``examples/`` and
render their figures, the PyData theme; pages are Markdown (MyST) so that the
user guide reads the same on GitHub. Built with warnings as errors in CI:

    python -m sphinx -W -b html docs docs/_build/html
"""

import os
import sys

import matplotlib

matplotlib.use("Agg")

sys.path.insert(0, os.path.abspath(".."))

import skcrf  # noqa: E402

project = "skcrf"
author = "the skcrf developers"
copyright = "2026, the skcrf developers"
release = version = skcrf.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "sg_execution_times.rst"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.xref_missing"]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# "x : array-like of shape (n,)" and other free-form types are not references
numpydoc_xref_param_type = False

# no intersphinx: CI builds without network access, and a failed inventory
# fetch is a warning (an error under -W)

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # run only the examples that need no corpus (the bundled sample or
    # synthetic data); the others are rendered as code, with their commands
    "filename_pattern": r"(plots|hmm_vs_crf)\.py$",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "abort_on_example_error": True,
}

html_theme = "pydata_sphinx_theme"
html_title = f"skcrf {version}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "header_links_before_dropdown": 7,
}
html_static_path = []
templates_path = ["_templates"]


def _skip_metadata_routing(app, what, name, obj, skip, options):
    # scikit-learn's generated set_*_request methods: their docstrings point
    # into scikit-learn's own glossary, which this site does not have
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_routing)
