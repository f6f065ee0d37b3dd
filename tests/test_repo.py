"""Repository invariants: the README's set-up commands, CI, generated code, layering.

- README.md's first code block holds exactly ``make lab`` and ``make test``, and .ci/run
  runs ``make test``: CI runs what the README tells people to run.
- The committed ``framework_pb2.py`` is what the pinned protoc writes today.
- Dependencies point one way, engine <- designer <- widgets: engine/ imports neither
  designer nor widgets, and designer/ never imports widgets.
- Inside the engine, layers too: no import cycle (imports inside functions count), no
  private name imported from another module, and each sub-package imports only the
  ones below it (ir <- kernels <- runtime <- recurrent/autodiff <- debug <- executor).
"""
import ast
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README_COMMANDS = ["make lab", "make test"]
# Folder -> its package, and the packages that folder must not import.
PACKAGES = {"engine": "fluidscope.engine", "designer": "fluidscope.designer",
            "widgets": "fluidscope.widgets"}
FORBIDDEN = {
    "engine": ("fluidscope.designer", "fluidscope.widgets"),
    "designer": ("fluidscope.widgets",),
}


def first_code_block(markdown):
    """Lines of the first fenced (```) code block of a Markdown text, or None."""
    match = re.search(r"^```[^\n]*\n(.*?)^```", markdown, flags=re.MULTILINE | re.DOTALL)
    return None if match is None else match.group(1).splitlines()


def test_readme_starts_with_the_two_commands():
    block = first_code_block((ROOT / "README.md").read_text())
    assert block is not None, "README.md has no fenced code block"
    commands = [line.strip() for line in block if line.strip()]
    assert commands == README_COMMANDS, (
        f"README.md's first code block must be exactly {README_COMMANDS}, found {commands}"
    )


def test_ci_runs_the_readme_test_command():
    ci = ROOT / ".ci" / "run"
    assert ci.stat().st_mode & 0o111, ".ci/run is not executable"
    lines = [line.strip() for line in ci.read_text().splitlines()]
    assert "make test" in lines, ".ci/run must run `make test`, the README's test command"


def test_framework_pb2_is_fresh_protoc_output():
    result = subprocess.run(
        [sys.executable, "-m", "fluidscope.engine.ir.proto.regen", "--check"],
        cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, (
        "engine/ir/proto/framework_pb2.py differs from protoc's output; regenerate it with "
        f"`python -m fluidscope.engine.ir.proto.regen`\n{result.stdout}{result.stderr}"
    )


def imported_modules(path, package):
    """(line, absolute module name) of every import statement in the file at ``path``.

    ``package`` is the dotted package that holds the file; relative imports are resolved
    against it, so ``from ..widgets import x`` in engine/ reads as fluidscope.widgets.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = absolute_base(node, package)
            yield node.lineno, base
            # `from fluidscope import widgets` names the package in the alias.
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def absolute_base(node, package):
    """The absolute module a ``from ... import`` statement (``node``) imports from."""
    if node.level == 0:
        return node.module
    parts = package.split(".")
    parent = parts[: len(parts) - node.level + 1]
    return ".".join(parent + ([node.module] if node.module else []))


def python_files(folder):
    """(file, its dotted package) for every .py file under the top-level ``folder``."""
    top = ROOT / folder
    for path in sorted(top.rglob("*.py")):
        relative = path.relative_to(top).parent.parts
        yield path, ".".join((PACKAGES[folder],) + relative)


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_dependencies_point_one_way(folder):
    forbidden = FORBIDDEN[folder]
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path, package in python_files(folder)
        for line, module in imported_modules(path, package)
        if any(module == name or module.startswith(name + ".") for name in forbidden)
    ]
    assert not offenders, (
        f"{folder}/ must not import {', '.join(forbidden)} (engine <- designer <- widgets):\n"
        + "\n".join(offenders)
    )


def test_import_scan_resolves_relative_imports(tmp_path):
    """The scanner itself: relative and aliased imports are seen, so the test above bites."""
    source = tmp_path / "mod.py"
    source.write_text(
        "import fluidscope.widgets.render\n"
        "from ..widgets import canvas\n"
        "from .. import designer\n"
        "from . import kernels\n"
        "from fluidscope import widgets as w\n"
    )
    found = [module for _, module in imported_modules(source, "fluidscope.engine")]
    assert "fluidscope.widgets.render" in found
    assert "fluidscope.widgets" in found
    assert "fluidscope.designer" in found
    assert "fluidscope.engine.kernels" in found


# ------------------------------------------------------------- engine layering
ENGINE = "fluidscope.engine"
# Sub-package (or top-level module) of the engine -> what it must never import.
ENGINE_FORBIDDEN = {
    "ir": ("kernels", "runtime", "recurrent", "autodiff", "debug", "io", "executor", "prune",
           "random"),
    "kernels": ("runtime", "recurrent", "autodiff", "debug", "io", "executor", "prune"),
    "runtime": ("recurrent", "autodiff", "debug", "io", "executor", "prune", "kernels"),
    "recurrent": ("debug", "io", "executor"),
    "autodiff": ("debug", "io"),
    "debug": ("recurrent", "autodiff", "io", "executor", "kernels"),
}


def engine_modules():
    """Dotted name -> file of every module of the engine (a package by its __init__)."""
    top = ROOT / "engine"
    out = {}
    for path in sorted(top.rglob("*.py")):
        parts = path.relative_to(top).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((ENGINE,) + parts)] = path
    return out


def _package_of(name, path):
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def engine_import_edges(modules):
    """{module: {(line, imported engine module)}}: every import in the engine, at any
    depth of the file, resolved to the modules it makes Python execute (a submodule named
    in ``from pkg import sub`` and the packages on the way, except the engine itself and
    the importer's own packages, which are already being imported)."""
    edges = {}
    for name, path in modules.items():
        package, found = _package_of(name, path), set()
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0:
                    base = node.module
                else:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1]
                                    + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names
                                    if f"{base}.{a.name}" in modules]
            for target in targets:
                if not target.startswith(ENGINE + "."):
                    continue
                pieces = target.split(".")
                for k in range(3, len(pieces) + 1):
                    prefix = ".".join(pieces[:k])
                    if prefix in modules and not (name + ".").startswith(prefix + ".") \
                            and not (package + ".").startswith(prefix + "."):
                        found.add((node.lineno, prefix))
        edges[name] = found
    return edges


def _find_cycle(graph):
    """One import cycle of ``graph`` (module -> set of modules) as a list, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_engine_has_no_import_cycle():
    modules = engine_modules()
    edges = engine_import_edges(modules)
    # The engine's own __init__ imports everything to register ops: leave it out, since
    # every engine module passes through it by being in the package.
    graph = {m: {t for _, t in targets if t != ENGINE} for m, targets in edges.items()
             if m != ENGINE}
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle in engine/: " + " -> ".join(cycle)


def test_cycle_finder_sees_function_level_imports(tmp_path):
    assert _find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("layer", sorted(ENGINE_FORBIDDEN))
def test_engine_layers_import_only_downwards(layer):
    modules = engine_modules()
    edges = engine_import_edges(modules)
    forbidden = tuple(f"{ENGINE}.{name}" for name in ENGINE_FORBIDDEN[layer])
    prefix = f"{ENGINE}.{layer}"
    offenders = [
        f"{modules[name].relative_to(ROOT)}:{line} imports {target}"
        for name, targets in edges.items() if name == prefix or name.startswith(prefix + ".")
        for line, target in sorted(targets)
        if any(target == f or target.startswith(f + ".") for f in forbidden)
    ]
    assert not offenders, (
        f"engine/{layer} must not import {', '.join(ENGINE_FORBIDDEN[layer])}:\n"
        + "\n".join(offenders))


def test_ir_imports_nothing_of_the_engine_but_errors():
    modules = engine_modules()
    edges = engine_import_edges(modules)
    allowed = (f"{ENGINE}.ir", f"{ENGINE}.errors")
    offenders = [
        f"{modules[name].relative_to(ROOT)}:{line} imports {target}"
        for name, targets in edges.items() if name.startswith(f"{ENGINE}.ir")
        for line, target in sorted(targets)
        if not any(target == a or target.startswith(a + ".") for a in allowed)
    ]
    assert not offenders, "engine/ir must import only itself and errors:\n" + "\n".join(offenders)


def test_no_private_name_crosses_engine_modules():
    """``from x import _name`` and ``module._name`` on an imported engine module are both
    reaches into another module's privates."""
    modules = engine_modules()
    offenders = []
    for name, path in modules.items():
        package = _package_of(name, path)
        tree = ast.parse(path.read_text(), filename=str(path))
        module_aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1]
                                    + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        module_aliases.add(alias.asname or alias.name)
                    elif alias.name.startswith("_") and base.startswith(ENGINE):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports "
                                         f"{alias.name} from {base}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith(ENGINE) and alias.asname:
                        module_aliases.add(alias.asname)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} uses "
                                 f"{node.value.id}.{node.attr}")
    assert not offenders, "private names used across engine modules:\n" + "\n".join(offenders)


# ------------------------------------------------------------------ widgets layering
def widget_modules():
    """Dotted name -> file of every module under widgets/ (a package is its __init__)."""
    modules = {}
    for path, package in python_files("widgets"):
        name = package if path.name == "__init__.py" else f"{package}.{path.stem}"
        modules[name] = path
    return modules


def widget_imports(modules):
    """Module -> the widget modules it imports (function-level imports too).
    ``from pkg import sub`` imports the module ``pkg.sub``, not pkg's __init__; the
    __init__ of a package that Python runs first is not counted: that is how packages
    work, and a cycle through one shows up as an explicit import anyway."""
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = absolute_base(node, package)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in modules else base)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph):
    """One import cycle of ``graph`` as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_widgets_have_no_import_cycle():
    graph = widget_imports(widget_modules())
    assert "fluidscope.widgets.graph" in graph["fluidscope.widgets.debugger.view"]  # it sees
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in widgets/: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_widgets_render_is_pure():
    """render/ is program -> DOT text: no widget library, no view of widgets/ (keys.py,
    the pure node-key module, is the one thing it shares with the views)."""
    widget_libraries = ("anywidget", "ipywidgets", "traitlets", "IPython")
    allowed = ("fluidscope.widgets.render", "fluidscope.widgets.keys")
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path, package in python_files("widgets")
        if path.parent.name == "render"
        for line, module in imported_modules(path, package)
        if module.split(".")[0] in widget_libraries
        or (module.startswith("fluidscope.widgets")
            and not any(module == a or module.startswith(a + ".") for a in allowed))
    ]
    assert not offenders, "widgets/render/ must stay pure:\n" + "\n".join(offenders)


def private_uses(path, package):
    """(line, what) for every private name (``_x``, not dunder) of another module that
    the file at ``path`` imports by name or reads as an attribute of an imported module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    module_aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            module_aliases.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private:
                    yield node.lineno, f"from {node.module or '.'} import {alias.name}"
                module_aliases.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in module_aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            yield node.lineno, f"{node.value.id}.{node.attr}"


@pytest.mark.parametrize("folder", ["widgets", "engine/training"])
def test_no_private_name_crosses_a_module(folder):
    top = ROOT / folder
    offenders = [f"{path.relative_to(ROOT)}:{line} uses {what}"
                 for path in sorted(top.rglob("*.py"))
                 for line, what in private_uses(path, "")]
    assert not offenders, "private names used across modules:\n" + "\n".join(offenders)


def test_private_use_scan_sees_imports_and_attributes(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("from .a import _hidden, shown\nfrom . import b\nimport c as d\n"
                      "def f(self):\n    return b._inner(d._x, self._own, b.__name__)\n")
    assert [what for _, what in private_uses(source, "")] == [
        "from a import _hidden", "b._inner", "d._x"]
