"""Reading the import structure of a top-level folder (engine/, designer/, widgets/).

Used by tests/test_layering.py. Everything is read with ``ast``, never imported, and
every import counts wherever it stands: a function-level import closes a cycle as
surely as one at the top of a file, only later.
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = {"engine": "fluidscope.engine", "designer": "fluidscope.designer",
            "widgets": "fluidscope.widgets"}


def modules_of(folder):
    """Dotted module name -> file, for every module of a top-level folder (a package by
    its __init__)."""
    top = ROOT / folder
    out = {}
    for path in sorted(top.rglob("*.py")):
        parts = path.relative_to(top).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((PACKAGES[folder],) + parts)] = path
    return out


def package_of(name, path):
    """The package a module's relative imports are resolved against."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def absolute_base(node, package):
    """The absolute module a ``from ... import`` statement (``node``) imports from."""
    if node.level == 0:
        return node.module or ""
    parts = package.split(".")
    parent = parts[: len(parts) - node.level + 1]
    return ".".join(parent + ([node.module] if node.module else []))


def executed_nodes(tree):
    """Every node of ``tree`` except what sits under ``if TYPE_CHECKING:``, which only a
    type checker reads (an annotation's import does not run, so it makes no cycle)."""
    for node in ast.iter_child_nodes(tree):
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            for branch in node.orelse:
                yield branch
                yield from executed_nodes(branch)
            continue
        yield node
        yield from executed_nodes(node)


def import_statements(path, package):
    """(line, absolute module) of every import in the file that can run, ``from pkg
    import name`` giving both ``pkg`` and ``pkg.name`` (the name may be a submodule)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in executed_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = absolute_base(node, package)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def import_graph(modules, root):
    """{module: {(line, module of ``modules`` it makes Python execute)}}.

    An import executes the module it names and every package on the way there, except
    ``root`` (every module of the folder passes through it by being in the package) and
    the importer's own packages, which are already being imported."""
    graph = {}
    for name, path in modules.items():
        package, found = package_of(name, path), set()
        for line, target in import_statements(path, package):
            if not target.startswith(root + "."):
                continue
            pieces = target.split(".")
            for k in range(len(root.split(".")) + 1, len(pieces) + 1):
                prefix = ".".join(pieces[:k])
                if (prefix in modules and prefix != name
                        and not (package + ".").startswith(prefix + ".")):
                    found.add((line, prefix))
        graph[name] = found
    return graph


def find_cycle(graph):
    """One cycle of ``graph`` (node -> iterable of nodes) as a list ending where it
    starts, or None."""
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


def private_uses(path, package):
    """(line, what) for every private name (``_x``, not dunder) of another module that the
    file imports by name, or reads as an attribute of a module it imported."""
    tree = ast.parse(path.read_text(), filename=str(path))
    module_aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            module_aliases.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = absolute_base(node, package)
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield node.lineno, f"from {base or '.'} import {alias.name}"
                module_aliases.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in module_aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            yield node.lineno, f"{node.value.id}.{node.attr}"
