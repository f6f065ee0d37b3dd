"""Every ``notebooks/*.ipynb`` runs top to bottom in a fresh ``python3`` kernel.

Each notebook is executed with nbclient in a temporary copy of ``notebooks/`` (so files a
notebook writes, and its outputs, never land in the checkout). A failure names the
notebook and the cell, and shows the cell's source and the kernel's traceback.

The kernel must be this virtual environment's python, which has fluidscope installed:
``test_kernel_is_this_venv`` checks the kernelspec that Jupyter resolves and what a
running kernel reports. Every Jupyter/IPython directory points into a temporary folder,
so running the tests writes nothing to ``~``.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
KERNEL = "python3"
CELL_TIMEOUT_S = 600
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Per-user directories the kernel and jupyter_client would otherwise create under ~.
PRIVATE_DIRS = {
    "IPYTHONDIR": "ipython",
    "JUPYTER_RUNTIME_DIR": "runtime",
    "JUPYTER_CONFIG_DIR": "config",
    "JUPYTER_DATA_DIR": "data",
    "MPLCONFIGDIR": "matplotlib",
}


@pytest.fixture(scope="session")
def jupyter_env(tmp_path_factory):
    """Environment of this process (and so of every kernel) for the notebook tests.

    The user data dir is empty, and the environment's kernelspecs are preferred over
    the user's, so ``python3`` resolves to the kernelspec ipykernel installed in this
    venv rather than to one a user registered in ``~/.local/share/jupyter``.
    """
    base = tmp_path_factory.mktemp("jupyter")
    with pytest.MonkeyPatch.context() as patch:
        for var, name in PRIVATE_DIRS.items():
            (base / name).mkdir()
            patch.setenv(var, str(base / name))
        patch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # silences jupyter_core's migration warning
        patch.setenv("JUPYTER_PREFER_ENV_PATH", "1")
        yield dict(os.environ)


def failure_report(label, nb, index, error):
    """Text naming the failing cell, with its source and the kernel's traceback."""
    if index is None:
        return f"{label}: {type(error).__name__}: {error}"
    cell = nb.cells[index]
    tracebacks = [
        "\n".join(output.get("traceback", [])) or f"{output['ename']}: {output['evalue']}"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    if isinstance(error, CellTimeoutError):
        detail = f"timed out after {CELL_TIMEOUT_S} s"
    elif isinstance(error, DeadKernelError):
        detail = "the kernel died"
    else:
        detail = "raised"
    traceback = ANSI_ESCAPE.sub("", "\n".join(tracebacks)) or str(error)
    return (
        f"{label}: cell {index} {detail}\n"
        f"--- source of cell {index} ---\n{cell.source}\n"
        f"--- traceback ---\n{traceback}"
    )


def execute(nb, cwd, label):
    """Run ``nb`` in place (in memory) with ``cwd`` as the kernel's working directory.

    Fails the test with :func:`failure_report` when a cell raises, times out or kills
    the kernel. Nothing is written back to disk.
    """
    current = {"index": None}

    def on_cell_execute(cell, cell_index, **_):
        current["index"] = cell_index

    client = NotebookClient(
        nb,
        kernel_name=KERNEL,
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(cwd)}},
        on_cell_execute=on_cell_execute,
    )
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
        report = failure_report(label, nb, current["index"], error)
    else:
        return nb
    # Outside the except block, so pytest does not print the chained nbclient error.
    pytest.fail(report, pytrace=False)


def cell_text(cell):
    """Concatenated stream output of one executed code cell."""
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_kernel_is_this_venv(jupyter_env, tmp_path):
    """``python3`` resolves to this venv, and a started kernel imports fluidscope from it."""
    jupyter = pathlib.Path(sys.executable).parent / "jupyter"
    listing = subprocess.run(
        [str(jupyter), "kernelspec", "list", "--json"],
        env=jupyter_env, capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL,
    )
    spec = json.loads(listing.stdout)["kernelspecs"][KERNEL]
    resource_dir = pathlib.Path(spec["resource_dir"]).resolve()
    assert resource_dir.is_relative_to(pathlib.Path(sys.prefix).resolve()), (
        f"kernelspec {KERNEL!r} comes from {resource_dir}, not from this venv ({sys.prefix})"
    )
    # jupyter_client replaces a bare "python" with its own interpreter (sys.executable).
    launcher = spec["spec"]["argv"][0]
    assert launcher in ("python", "python3") or pathlib.Path(launcher).parent.resolve() == (
        pathlib.Path(sys.executable).parent.resolve()
    ), f"kernelspec {KERNEL!r} launches {launcher}, not this venv's python"

    probe = nbformat.v4.new_notebook()
    probe.cells.append(nbformat.v4.new_code_cell(
        "import sys, fluidscope.engine\nprint(sys.prefix)\nprint(fluidscope.engine.__file__)"
    ))
    execute(probe, tmp_path, "kernel probe")
    prefix, engine_file = cell_text(probe.cells[0]).split()
    assert pathlib.Path(prefix).resolve() == pathlib.Path(sys.prefix).resolve()
    assert pathlib.Path(engine_file).resolve().is_relative_to(ROOT / "engine")


@pytest.mark.parametrize(
    "notebook", NOTEBOOKS or [None], ids=[p.name for p in NOTEBOOKS] or ["no-notebooks"]
)
def test_notebook_runs(notebook, jupyter_env, tmp_path):
    """The notebook runs top to bottom without an error, in a copy of notebooks/."""
    if notebook is None:
        pytest.skip(f"no notebooks yet: {NOTEBOOK_DIR.relative_to(ROOT)}/*.ipynb matches nothing")
    workdir = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOK_DIR, workdir, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    nb = nbformat.read(workdir / notebook.name, as_version=4)
    execute(nb, workdir, str(notebook.relative_to(ROOT)))
