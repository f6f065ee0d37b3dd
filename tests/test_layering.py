"""The architecture, checked: dependencies point engine <- designer <- widgets; inside
the engine each layer imports only the layers below it; no import cycle anywhere (imports
inside functions count); no module reaches into another module's private names."""
import pytest

from layering import (PACKAGES, ROOT, find_cycle, import_graph, import_statements,
                      modules_of, package_of, private_uses)

# Top-level folder -> packages it must never import.
FORBIDDEN = {
    "engine": ("fluidscope.designer", "fluidscope.widgets"),
    "designer": ("fluidscope.widgets",),
}
ENGINE = PACKAGES["engine"]
# Sub-package (or top-level module) of the engine -> what it must never import.
ENGINE_FORBIDDEN = {
    "ir": ("kernels", "runtime", "recurrent", "autodiff", "debug", "io", "executor", "prune",
           "random", "training"),
    "kernels": ("runtime", "recurrent", "autodiff", "debug", "io", "executor", "prune",
                "training"),
    "runtime": ("recurrent", "autodiff", "debug", "io", "executor", "prune", "kernels",
                "training"),
    "recurrent": ("debug", "io", "executor", "training"),
    "autodiff": ("debug", "io", "training"),
    "debug": ("recurrent", "autodiff", "io", "executor", "kernels", "training"),
    "training": ("debug",),
}
WIDGET_LIBRARIES = ("anywidget", "ipywidgets", "traitlets", "IPython")
GENERATED = ("framework_pb2.py",)  # protoc's output follows protobuf's conventions, not ours


def offenders_of(folder, rule):
    """'file:line imports module' for every import of ``folder`` that ``rule(importer,
    module)`` refuses."""
    return [f"{path.relative_to(ROOT)}:{line} imports {module}"
            for name, path in modules_of(folder).items()
            for line, module in import_statements(path, package_of(name, path))
            if rule(name, module)]


def within(module, *packages):
    return any(module == p or module.startswith(p + ".") for p in packages)


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_dependencies_point_one_way(folder):
    bad = offenders_of(folder, lambda _, module: within(module, *FORBIDDEN[folder]))
    assert not bad, (f"{folder}/ must not import {', '.join(FORBIDDEN[folder])} "
                     "(engine <- designer <- widgets):\n" + "\n".join(bad))


@pytest.mark.parametrize("folder", ["engine", "widgets"])
def test_no_import_cycle(folder):
    graph = import_graph(modules_of(folder), PACKAGES[folder])
    cycle = find_cycle({m: {t for _, t in targets} for m, targets in graph.items()})
    assert cycle is None, f"import cycle in {folder}/: " + " -> ".join(cycle)


@pytest.mark.parametrize("layer", sorted(ENGINE_FORBIDDEN))
def test_engine_layers_import_only_downwards(layer):
    forbidden = [f"{ENGINE}.{name}" for name in ENGINE_FORBIDDEN[layer]]
    bad = offenders_of("engine", lambda name, module: within(name, f"{ENGINE}.{layer}")
                       and within(module, *forbidden))
    assert not bad, (f"engine/{layer} must not import {', '.join(ENGINE_FORBIDDEN[layer])}:\n"
                     + "\n".join(bad))


def test_ir_imports_nothing_of_the_engine_but_errors():
    bad = offenders_of("engine", lambda name, module: within(name, f"{ENGINE}.ir")
                       and within(module, ENGINE)
                       and not within(module, f"{ENGINE}.ir", f"{ENGINE}.errors"))
    assert not bad, "engine/ir must import only itself and errors:\n" + "\n".join(bad)


def test_engine_training_needs_no_widget_library():
    bad = offenders_of("engine", lambda name, module: within(name, f"{ENGINE}.training")
                       and module.split(".")[0] in WIDGET_LIBRARIES)
    assert not bad, "engine/training must run without widgets:\n" + "\n".join(bad)


def test_widgets_render_is_pure():
    """render/ is program -> DOT text: no widget library, no view of widgets/ (keys.py,
    the pure node-key module, is the one thing it shares with the views)."""
    render, keys = "fluidscope.widgets.render", "fluidscope.widgets.keys"
    bad = offenders_of("widgets", lambda name, module: within(name, render) and (
        module.split(".")[0] in WIDGET_LIBRARIES
        or (within(module, "fluidscope.widgets") and not within(module, render, keys))))
    assert not bad, "widgets/render/ must stay pure:\n" + "\n".join(bad)


@pytest.mark.parametrize("folder", ["engine", "widgets"])
def test_no_private_name_crosses_a_module(folder):
    bad = [f"{path.relative_to(ROOT)}:{line} uses {what}"
           for name, path in modules_of(folder).items() if path.name not in GENERATED
           for line, what in private_uses(path, package_of(name, path))]
    assert not bad, f"private names used across modules of {folder}/:\n" + "\n".join(bad)


# ------------------------------------------------------------ the scanners themselves
def test_import_scan_resolves_relative_imports(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("import fluidscope.widgets.render\nfrom ..widgets import canvas\n"
                      "from .. import designer\nfrom . import kernels\n"
                      "from fluidscope import widgets as w\n")
    found = [module for _, module in import_statements(source, "fluidscope.engine")]
    for module in ("fluidscope.widgets.render", "fluidscope.widgets", "fluidscope.designer",
                   "fluidscope.engine.kernels"):
        assert module in found


def test_import_graph_sees_function_level_imports_and_packages_on_the_way(tmp_path):
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from . import c\ndef f():\n    from .sub import b\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "sub" / "b.py").write_text("from .. import a\n")
    modules = {"p.a": tmp_path / "a.py", "p.c": tmp_path / "c.py",
               "p.sub": tmp_path / "sub" / "__init__.py",
               "p.sub.b": tmp_path / "sub" / "b.py"}
    graph = import_graph(modules, "p")
    assert {t for _, t in graph["p.a"]} == {"p.sub", "p.sub.b"}
    assert find_cycle({m: {t for _, t in ts} for m, ts in graph.items()}) == [
        "p.a", "p.sub.b", "p.a"]


def test_cycle_finder():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_private_use_scan_sees_imports_and_attributes(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("from .a import _hidden, shown\nfrom . import b\nimport c as d\n"
                      "def f(self):\n    return b._inner(d._x, self._own, b.__name__)\n")
    assert [what for _, what in private_uses(source, "p")] == [
        "from p.a import _hidden", "b._inner", "d._x"]
