"""The package's layers, checked: who may import whom, no import cycle, and the
NumPy-only runtime of model files.

Each layer below may import itself and the layers above it in this list,
never a later one (module-level and function-level imports alike). The
docstring of each subpackage's ``__init__`` says the same in prose.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

import skcrf

ROOT = pathlib.Path(skcrf.__file__).parent

#: layers, lowest first: a module belongs to the first entry one of whose
#: prefixes names it
LAYERS = [
    ("base", ["skcrf._version", "skcrf.exceptions", "skcrf._lazy", "skcrf._tag_schemes",
              "skcrf._arrays", "skcrf._inspection", "skcrf._compile_notice"]),
    ("kernels", ["skcrf._kernels"]),
    ("inference", ["skcrf._inference", "skcrf._numpy_inference"]),
    ("containers", ["skcrf._sequences", "skcrf._validation", "skcrf._persistence",
                    "skcrf._sklearn_compat", "skcrf._constraints"]),
    ("features", ["skcrf.feature_extraction"]),
    ("training", ["skcrf._training"]),
    ("estimator", ["skcrf._crf", "skcrf.metrics"]),
    ("segmentation", ["skcrf.segmentation"]),
    ("io", ["skcrf.io"]),
    ("front-ends", ["skcrf.cli", "skcrf.__main__", "skcrf.dask", "skcrf.plot",
                    "skcrf.compat", "skcrf.datasets", "skcrf._warm_up", "skcrf._formats"]),
]
#: the package root only lists names (skcrf._lazy imports them on first use)
ROOT_MODULE = "skcrf"

#: what the compiled kernels may import from outside themselves
KERNEL_IMPORTS = {"skcrf._arrays"}

#: the model files' runtime (``skcrf tag``): importing any of these must not
#: import SciPy, scikit-learn, Numba or joblib
NUMPY_ONLY = [
    "skcrf", "skcrf.cli", "skcrf.cli._main", "skcrf.cli._parser", "skcrf.cli._io",
    "skcrf.cli._tag", "skcrf._formats", "skcrf.io", "skcrf.io._validation", "skcrf.io._model",
    "skcrf.io._model_file", "skcrf.io._crfpp_model",
    "skcrf.io._columns", "skcrf._inference", "skcrf._numpy_inference",
    "skcrf.feature_extraction._units", "skcrf.feature_extraction._sources",
    "skcrf.feature_extraction._char_classes", "skcrf.feature_extraction._templates",
    "skcrf.feature_extraction._template_set", "skcrf.feature_extraction._vocabulary",
    "skcrf.feature_extraction._numpy_keys", "skcrf.feature_extraction._crfpp",
    "skcrf.segmentation._tags", "skcrf.segmentation._new_words",
    "skcrf.segmentation._segment",
]
HEAVY = ("numba", "llvmlite", "scipy", "sklearn", "joblib", "threadpoolctl")


def _modules():
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _layer(name):
    if name == ROOT_MODULE:
        return -1, "root"
    for rank, (layer, prefixes) in enumerate(LAYERS):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return rank, layer
    raise AssertionError(f"{name} belongs to no layer: add it to LAYERS")


def _imports(name):
    """``[(imported module, at module level?)]`` of module ``name``: skcrf
    modules resolved, others by their top-level package."""
    path, is_pkg = MODULES[name]
    package = name if is_pkg else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def visit(node, top):
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                   ast.ClassDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, top) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module
                for a in child.names:
                    sub = f"{mod}.{a.name}"
                    found.append((sub if sub in MODULES else mod, top))
            # class bodies run at import time: their imports are module level
            visit(child, inner or (top and isinstance(child, ast.ClassDef)))

    visit(tree, True)
    return found


def test_every_module_is_in_a_layer():
    for name in MODULES:
        _layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_down_the_layers(name):
    rank, layer = _layer(name)
    for target, top in _imports(name):
        if not target.startswith("skcrf"):
            if layer == "kernels":
                assert target.split(".")[0] not in ("scipy", "sklearn"), (name, target)
            continue
        if target not in MODULES:
            target = target.rpartition(".")[0]
        t_rank, t_layer = _layer(target)
        if layer == "kernels" and t_layer != "kernels":
            assert target in KERNEL_IMPORTS, f"{name} imports {target}"
        if name == ROOT_MODULE:
            continue
        assert t_rank <= rank, (f"{name} ({layer}) imports {target} ({t_layer}), a "
                                f"higher layer{'' if top else ' (inside a function)'}")


def test_no_import_cycle():
    graph = {name: {t for t, top in _imports(name) if top and t in MODULES and t != name}
             for name in MODULES}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def strong(v):       # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    assert not cycles, cycles


@pytest.mark.parametrize("name", NUMPY_ONLY)
def test_numpy_only_modules_import_no_heavy_package_at_module_level(name):
    seen, todo = set(), [name]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for target, top in _imports(m):
            if not top:
                continue
            assert target.split(".")[0] not in HEAVY, f"{name} -> {m} imports {target}"
            if target in MODULES:
                todo.append(target)
            # importing a module imports its packages first
            parts = target.split(".")
            todo.extend(".".join(parts[:k]) for k in range(1, len(parts))
                        if ".".join(parts[:k]) in MODULES)


def test_numpy_only_modules_really_import_nothing_heavy():
    code = ("import sys\n"
            + "".join(f"import {m}\n" for m in NUMPY_ONLY)
            + f"bad = sorted(k for k in sys.modules if k.split('.')[0] in {HEAVY!r})\n"
            "assert not bad, bad\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr


def test_subpackage_docstrings_say_what_they_own_and_may_import():
    for name, (path, is_pkg) in MODULES.items():
        if is_pkg and name != ROOT_MODULE:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            assert "May import" in doc or name in ("skcrf.compat", "skcrf.datasets"), name


def test_no_module_is_over_600_lines():
    long = {n: len(p.read_text(encoding="utf-8").splitlines())
            for n, (p, _) in MODULES.items()}
    assert not {n: k for n, k in long.items() if k > 600}
