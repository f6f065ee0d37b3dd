"""A real JupyterLab in headless Chromium, for end-to-end tests (Playwright, sync API).

The fixtures in ``conftest.py`` start one ``jupyter lab`` and one browser per session and
give each test a fresh browser context; this module holds the pieces they use and the
helpers tests call:

    path = lab.write_notebook("demo.ipynb", ["import fluidscope", "GraphView(p)", ...])
    nb = open_notebook(page, lab, "demo.ipynb")   # waits until the kernel is idle
    cell = nb.run_cell(1)                           # Ctrl+Enter, waits for "[n]:"
    nb.run_until(2, "RENDERED_BY=browser")          # re-runs a print cell until it says so
    nb.output_text(2)

A test module starts with ``jlab.skip_unless_runnable()`` before importing Playwright.

Everything runs offline and writes nothing outside a temporary folder (see
/work/shared/notes/jupyterlab_e2e.md for why each setting is here).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

import nbformat

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
    # every host name but the local server's fails to resolve: nothing can leave the machine
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
]
# No popups (news toast, kernel chooser), every cell attached to the DOM (no windowing).
LAB_SETTING_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
    "@jupyterlab/notebook-extension:tracker": {
        "windowingMode": "none", "autoStartDefaultKernel": True},
    "@jupyterlab/apputils-extension:sessionDialogs": {"skipKernelRestartDialog": True},
}
SERVER_CONFIG = {
    "LabApp": {"news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
               "extension_manager": "readonly"},
}
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
# The status bar can say "Idle" before the kernel is connected; this asks the kernel itself
# (needs --LabApp.expose_app_in_browser=True).
KERNEL_READY_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""
# Error outputs of cell i, read from the notebook model (stderr text looks the same in the DOM).
CELL_ERRORS_JS = """(i) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
  return cell.model.outputs.toJSON().filter((o) => o.output_type === 'error')
    .map((o) => `${o.ename}: ${o.evalue}`);
}"""
LOCAL_PREFIXES = ("http://127.0.0.1", "ws://127.0.0.1", "blob:http://127.0.0.1", "data:",
                  "about:")
START_TIMEOUT_S = 60
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def find_chromium() -> str | None:
    """Debian's chromium (``$FLUIDSCOPE_CHROMIUM`` overrides); never Playwright's download."""
    for candidate in (os.environ.get("FLUIDSCOPE_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def missing_tools() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed in this venv (pip install -e '.[dev]')"
    if find_chromium() is None:
        return "Debian's chromium is not installed (scripts/setup.sh --test installs it)"
    if not (pathlib.Path(sys.executable).parent / "jupyter-lab").is_file():
        return "jupyter-lab is not installed in this venv"
    return None


def skip_unless_runnable():
    """Skip the calling test module (at import) when the tools are missing; fail instead
    when ``FLUIDSCOPE_REQUIRE_E2E=1`` (CI, where they must be there)."""
    import pytest

    reason = missing_tools()
    if reason and os.environ.get("FLUIDSCOPE_REQUIRE_E2E") == "1":
        pytest.fail(f"browser tests required (FLUIDSCOPE_REQUIRE_E2E=1) but {reason}")
    if reason:
        pytest.skip(reason, allow_module_level=True)


def is_local(url: str) -> bool:
    return url.startswith(LOCAL_PREFIXES)


def private_env(base: pathlib.Path) -> dict:
    """Environment for the server and its kernels: every Jupyter/IPython/XDG directory in
    ``base``, and this venv's kernelspec preferred, so ``python3`` is this venv's python
    (which imports fluidscope from this checkout)."""
    dirs = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_DATA_DIR": "data",
            "JUPYTER_RUNTIME_DIR": "runtime", "JUPYTERLAB_SETTINGS_DIR": "user-settings",
            "JUPYTERLAB_WORKSPACES_DIR": "workspaces", "IPYTHONDIR": "ipython",
            "MPLCONFIGDIR": "matplotlib", "XDG_CONFIG_HOME": "xdg-config",
            "XDG_CACHE_HOME": "xdg-cache"}
    env = dict(os.environ)
    base = pathlib.Path(base).resolve()
    for var, name in dirs.items():
        (base / name).mkdir(parents=True, exist_ok=True)
        env[var] = str(base / name)
    env.update(JUPYTER_PLATFORM_DIRS="1", JUPYTER_PREFER_ENV_PATH="1", PYTHONUNBUFFERED="1")
    return env


@dataclass
class LabServer:
    """One ``jupyter lab`` on 127.0.0.1 with a free port, no token, popups turned off."""

    base: pathlib.Path
    url: str = ""
    proc: subprocess.Popen | None = None
    env: dict = field(default_factory=dict)

    def __post_init__(self):
        self.base = pathlib.Path(self.base).resolve()  # the server runs in another cwd

    @property
    def root_dir(self) -> pathlib.Path:
        return self.base / "root"

    @property
    def log_path(self) -> pathlib.Path:
        return self.base / "jupyter-lab.log"

    def start(self) -> "LabServer":
        self.env = private_env(self.base)
        config = pathlib.Path(self.env["JUPYTER_CONFIG_DIR"])
        (config / "labconfig").mkdir(exist_ok=True)
        (config / "labconfig" / "default_setting_overrides.json").write_text(
            json.dumps(LAB_SETTING_OVERRIDES), encoding="utf-8")
        (config / "jupyter_server_config.json").write_text(
            json.dumps(SERVER_CONFIG), encoding="utf-8")
        self.root_dir.mkdir(exist_ok=True)
        lab = pathlib.Path(sys.executable).parent / "jupyter-lab"
        cmd = [str(lab), "--no-browser", "--ServerApp.allow_root=True",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0", "--ServerApp.port_retries=0",
               "--IdentityProvider.token=", "--ServerApp.password=",
               "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={self.root_dir}",
               "--LabApp.expose_app_in_browser=True"]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, env=self.env, cwd=self.root_dir, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        # port=0: the server binds a free port and writes its URL to jpserver-<pid>.json
        info_file = pathlib.Path(self.env["JUPYTER_RUNTIME_DIR"]) / f"jpserver-{self.proc.pid}.json"
        deadline = time.monotonic() + START_TIMEOUT_S
        last_error = "no server info file yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            if info_file.is_file():
                try:
                    self.url = json.loads(info_file.read_text(encoding="utf-8"))["url"]
                    with urllib.request.urlopen(self.url + "api/status", timeout=5) as reply:
                        if reply.status == 200:
                            return self
                except (ValueError, KeyError, OSError) as exc:  # half-written file, not listening
                    last_error = f"{type(exc).__name__}: {exc}"
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {START_TIMEOUT_S} s (last: "
                           f"{last_error}):\n{self.log_tail()}")

    def stop(self):
        """Shut down through the API (stops the kernels too); kill the group as a fallback."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            request = urllib.request.Request(self.url + "api/shutdown", method="POST", data=b"")
            urllib.request.urlopen(request, timeout=10).close()
            self.proc.wait(timeout=20)
        except (OSError, urllib.error.URLError, subprocess.TimeoutExpired):
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def log_tail(self, chars=4000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def write_notebook(self, name: str, cells) -> pathlib.Path:
        """Write ``root_dir/name``: each cell a code string, or ``("markdown", text)``.
        The kernelspec is in the metadata, so JupyterLab asks nothing before starting it."""
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata["language_info"] = {"name": "python"}
        for cell in cells:
            if isinstance(cell, tuple) and cell[0] == "markdown":
                nb.cells.append(nbformat.v4.new_markdown_cell(cell[1]))
            else:
                nb.cells.append(nbformat.v4.new_code_cell(cell))
        path = self.root_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        return path


@dataclass
class NetworkLog:
    """Every request a page made, and the ones that did not go to 127.0.0.1."""

    requests: list = field(default_factory=list)
    outside: list = field(default_factory=list)
    console: list = field(default_factory=list)  # warnings, errors, uncaught exceptions

    def watch(self, page):
        page.on("request", self._on_request)
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def _on_request(self, request):
        self.requests.append(request.url)
        if not is_local(request.url):
            self.outside.append(request.url)


class Notebook:
    """An open notebook tab; cells are addressed by index (markdown cells count)."""

    def __init__(self, page, name):
        self.page, self.name = page, name
        self.panel = page.locator(PANEL)

    def cell(self, i):
        return self.panel.locator(".jp-Notebook .jp-Cell").nth(i)

    def output(self, i):
        return self.cell(i).locator(".jp-OutputArea-output")

    def output_text(self, i) -> str:
        return "\n".join(self.output(i).all_inner_texts())

    def run_cell(self, i, timeout=60_000, check=True):
        """Run cell ``i`` with Ctrl+Enter (does not add a cell) and wait until its prompt
        shows a new execution count. ``check``: fail on a traceback in its output."""
        from playwright.sync_api import expect

        cell = self.cell(i)
        prompt = cell.locator(".jp-InputArea-prompt")
        before = prompt.inner_text().strip()
        cell.locator(".jp-InputArea-editor .cm-content").click()
        self.page.keyboard.press("Control+Enter")
        expect(prompt).not_to_have_text(before, timeout=timeout)
        expect(prompt).to_have_text(re.compile(r"^\s*\[\d+\]:\s*$"), timeout=timeout)
        if check:
            errors = self.page.evaluate(CELL_ERRORS_JS, i)
            assert not errors, f"{self.name}: cell {i} raised:\n" + "\n".join(errors)
        return cell

    def run_until(self, i, text, timeout_s=30.0) -> str:
        """Run cell ``i`` again until its output contains ``text``; returns the output.

        For cells that print state the front end sends back: the browser's comm message
        may reach the kernel just after a first run of the cell."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.run_cell(i)
            out = self.output_text(i)
            if text in out:
                return out
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: cell {i} never printed {text!r}; last output:\n{out}")

    def widget(self, i, selector):
        """A locator for ``selector`` inside cell ``i``'s output area."""
        return self.cell(i).locator(".jp-OutputArea-output").locator(selector)


def open_notebook(page, lab: LabServer, name: str, timeout=60_000) -> Notebook:
    """Open ``name`` (relative to the server root) in a fresh workspace and wait until its
    cells are rendered and its kernel is connected and idle."""
    from playwright.sync_api import expect

    n_cells = len(nbformat.read(lab.root_dir / name, as_version=4).cells)
    page.goto(f"{lab.url}lab/tree/{name}?reset")  # ?reset: ignore a saved workspace
    nb = Notebook(page, name)
    expect(nb.panel.locator(".jp-Notebook .jp-Cell")).to_have_count(n_cells, timeout=timeout)
    page.wait_for_function(KERNEL_READY_JS, timeout=timeout)
    expect(page.locator("#jp-main-statusbar")).to_contain_text("| Idle", timeout=timeout)
    return nb
