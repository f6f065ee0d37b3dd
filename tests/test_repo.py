"""Repository invariants: the README's set-up commands, CI, generated code, layering.

- README.md's first code block holds exactly ``make lab`` and ``make test``, and .ci/run
  runs ``make test``: CI runs what the README tells people to run.
- The committed ``framework_pb2.py`` is what the pinned protoc writes today.
- Dependencies point one way, engine <- designer <- widgets: engine/ imports neither
  designer nor widgets, and designer/ never imports widgets.
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
            if node.level == 0:
                base = node.module
            else:
                parts = package.split(".")
                parent = parts[: len(parts) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            yield node.lineno, base
            # `from fluidscope import widgets` names the package in the alias.
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


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
