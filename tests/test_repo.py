"""Repository invariants: the README's set-up commands, CI, generated code.

- README.md's first code block holds exactly ``make lab`` and ``make test``, and .ci/run
  runs ``make test``: CI runs what the README tells people to run.
- The committed ``framework_pb2.py`` is what the pinned protoc writes today.
- The layering of the packages is checked in test_layering.py.
"""
import pathlib
import re
import subprocess
import sys


ROOT = pathlib.Path(__file__).resolve().parents[1]
README_COMMANDS = ["make lab", "make test"]


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
