"""Fixtures for the browser tests: one JupyterLab and one Chromium per session, a fresh
browser context per test.

    def test_something(lab, page, network):
        lab.write_notebook("x.ipynb", ["print(1)"])
        nb = jlab.open_notebook(page, lab, "x.ipynb")
        nb.run_cell(0)
        assert network.outside == []

The tests skip (with the reason) when Playwright, Chromium or jupyter-lab is missing;
``FLUIDSCOPE_REQUIRE_E2E=1`` turns those skips into failures (for CI, where
``scripts/setup.sh --test`` installs chromium). On a failure the page's screenshot and
console log go to ``$E2E_ARTIFACTS`` (default: artifacts/e2e in the checkout).
"""
import os
import pathlib
import re

import pytest

import jlab

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def e2e_tools():
    jlab.skip_unless_runnable()


@pytest.fixture(autouse=True)
def patient_expect(e2e_tools):
    """Every answer in these tests makes a round trip through the kernel (and, for a
    graph, a Graphviz layout): allow a loaded machine more than Playwright's 5 s."""
    from playwright.sync_api import expect  # after the skip check: it may be missing
    expect.set_options(timeout=30_000)
    yield
    expect.set_options(timeout=None)


@pytest.fixture(scope="session")
def lab(e2e_tools, tmp_path_factory):
    """The running JupyterLab (a ``jlab.LabServer``): ``url``, ``root_dir``,
    ``write_notebook(name, cells)``."""
    server = jlab.LabServer(tmp_path_factory.mktemp("jupyterlab")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(e2e_tools, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium").resolve()
    with sync_playwright() as playwright:
        # Chromium writes crash reports and caches under XDG dirs even with a temp profile
        env = {**os.environ, "XDG_CONFIG_HOME": str(profile / "config"),
               "XDG_CACHE_HOME": str(profile / "cache")}
        chromium = playwright.chromium.launch(
            executable_path=jlab.find_chromium(), args=jlab.CHROMIUM_ARGS, headless=True,
            env=env)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def network():
    """Requests and console messages of the test's page (a ``jlab.NetworkLog``)."""
    return jlab.NetworkLog()


@pytest.fixture
def page(browser, lab, network, request):
    """A page in a new browser context. Fails the test if it sent any request anywhere
    but 127.0.0.1; saves a screenshot and the console log when the test failed."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    network.watch(page)
    try:
        yield page
        report = getattr(request.node, "e2e_call_report", None)
        if report is not None and report.failed:
            _save_artifacts(page, network, request.node.nodeid)
    finally:
        context.close()
    assert not network.outside, f"requests left 127.0.0.1: {network.outside}"


def _save_artifacts(page, network, nodeid):
    folder = pathlib.Path(os.environ.get("E2E_ARTIFACTS", ROOT / "artifacts" / "e2e"))
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid)[-120:]
    from playwright.sync_api import Error as PlaywrightError

    try:
        page.screenshot(path=str(folder / f"{stem}.png"), full_page=True)
    except PlaywrightError as exc:  # a crashed page: the console log is still worth keeping
        network.console.append(f"(screenshot failed: {exc})")
    (folder / f"{stem}.console.txt").write_text("\n".join(network.console), encoding="utf-8")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.e2e_call_report = report  # read by the page fixture's teardown
    return report
