"""The ``fluidscope`` command line: ``run`` (outputs printed or saved, feeds checked, never
unpickled) and ``lab`` (the command ``make lab`` runs, and a real JupyterLab serving the
folder), as subprocesses and through ``main(argv)``."""
import json
import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np

from cli_helpers import (DATA, FC, FC_OUT, ROOT, assert_user_error, call, classifier_design,
                         cli, two_input_model)
from fluidscope.engine import io as fio
from fluidscope.widgets.cli.lab import lab_argv


# ------------------------------------------------------------------ run
def test_run_prints_a_summary_of_each_output(tmp_path):
    code, out, err = cli("run", FC, "--feed", f"x={DATA / 'paddle_fc_x.npy'}")
    assert code == 0, err
    want = np.load(DATA / "paddle_fc_out.npy")
    found = re.fullmatch(rf"{re.escape(FC_OUT)}  \[{want.shape[0]}, 3\] float32  "
                         r"min (\S+)  mean (\S+)  max (\S+)\n", out)
    assert found, out
    np.testing.assert_allclose([float(v) for v in found.groups()],
                               [want.min(), want.mean(), want.max()], rtol=1e-5)


def test_run_saves_every_output_to_npz(tmp_path, capsys):
    feeds, want = two_input_model(tmp_path / "two")
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
    code, out, err = cli("run", tmp_path / "two.pdmodel", "--feed", f"b={tmp_path / 'b.npy'}",
                         "--feed", f"a={tmp_path / 'a.npy'}", "-o", tmp_path / "out.npz")
    assert code == 0, err
    assert out == f"wrote {tmp_path / 'out.npz'} ({', '.join(want)})\n"
    with np.load(tmp_path / "out.npz", allow_pickle=False) as saved:
        assert sorted(saved.files) == sorted(want)
        for name, value in want.items():
            np.testing.assert_allclose(saved[name], value, rtol=1e-6)
    code, out, _ = call(capsys, "run", tmp_path / "two", "--feed", f"a={tmp_path / 'a.npy'}",
                        "--feed", f"b={tmp_path / 'b.npy'}")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == list(want)


class LeavesAMark:
    """Unpickling this writes a file: the proof that a feed was (wrongly) unpickled."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (self.path,))


def test_run_errors(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.ones((2, 4), "float32"))
    np.save(tmp_path / "wide.npy", np.ones((2, 5), "float32"))
    mark = tmp_path / "unpickled"
    np.save(tmp_path / "evil.npy", np.array([LeavesAMark(mark)], dtype=object),
            allow_pickle=True)
    (tmp_path / "text.npy").write_text("1 2 3")
    np.savez(tmp_path / "both.npz", x=np.ones(1))
    shutil.copy(tmp_path / "both.npz", tmp_path / "zip.npy")
    x = f"x={tmp_path / 'x.npy'}"
    design = classifier_design(tmp_path / "clf.fsdesign.json")
    fio.save_program(fio.load_program(f"{FC}.pdmodel"), tmp_path / "noparams.pdmodel")
    desc = fio.load_program(f"{FC}.pdmodel")
    fetch = next(k for k, op in enumerate(desc.blocks[0].ops) if op.type == "fetch")
    del desc.blocks[0].ops[fetch]
    fio.save_program(desc, tmp_path / "nofetch.pdmodel")
    for args, said in (([FC, "--feed", f"y={tmp_path / 'x.npy'}"], "no feed y; its feeds are x"),
                       ([FC], "missing --feed for x"),
                       ([FC, "--feed", x, "--feed", x], "--feed x given more than once"),
                       ([FC, "--feed", f"x={tmp_path / 'none.npy'}"], "cannot read"),
                       ([FC, "--feed", f"x={tmp_path / 'evil.npy'}"], "Object arrays"),
                       ([FC, "--feed", f"x={tmp_path / 'text.npy'}"], "not a .npy file"),
                       ([FC, "--feed", f"x={tmp_path / 'zip.npy'}"], "is an .npz archive"),
                       ([FC, "--feed", f"x={tmp_path / 'wide.npy'}"],
                        "feed 'x': got shape [2, 5], the program declares [-1, 4]"),
                       ([design, "--feed", x], "is a design: it holds no trained weights"),
                       ([tmp_path / "noparams", "--feed", x], "no " + str(tmp_path / "noparams")),
                       ([tmp_path / "nofetch.pdmodel", "--feed", x], "has no fetch ops")):
        code, _, err = call(capsys, "run", *args)
        assert_user_error(code, err, said)
    assert not mark.exists()
    code, _, err = cli("run", FC, "--feed", f"x={tmp_path / 'evil.npy'}")
    assert_user_error(code, err, "evil.npy", "allow_pickle=False")
    assert not mark.exists()


# ------------------------------------------------------------------ lab
def test_lab_runs_what_make_lab_runs():
    code, out, err = cli("lab", "--print-command", "--", "--port=8890", "--ip=0.0.0.0")
    assert code == 0, err
    argv = shlex.split(out)
    assert argv[:4] == [sys.executable, "-m", "jupyterlab", str(ROOT / "notebooks")]
    assert "--ServerApp.allow_root=True" in argv and argv[-2:] == ["--port=8890", "--ip=0.0.0.0"]
    make = (ROOT / "Makefile").read_text()
    assert "jupyter lab notebooks/ --ServerApp.allow_root=True $(NO_BROWSER) $(LAB_ARGS)" in make


def test_lab_opens_no_browser_on_linux_without_a_display(tmp_path):
    assert "--no-browser" in lab_argv(tmp_path, [], environ={}, platform="linux")
    assert "--no-browser" not in lab_argv(tmp_path, [], environ={"DISPLAY": ":0"},
                                          platform="linux")
    assert "--no-browser" not in lab_argv(tmp_path, [], environ={}, platform="darwin")


def test_lab_with_a_missing_folder(tmp_path, capsys):
    code, _, err = call(capsys, "lab", "--dir", tmp_path / "none")
    assert_user_error(code, err, "no such folder")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_starts_jupyterlab_serving_the_folder(tmp_path):
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "hello.txt").write_text("hi")
    port = free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_DATA_DIR=str(tmp_path / "data"), JUPYTER_RUNTIME_DIR=str(tmp_path / "run"),
               JUPYTER_PLATFORM_DIRS="1")
    env.pop("DISPLAY", None), env.pop("WAYLAND_DISPLAY", None)
    log = open(tmp_path / "lab.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "fluidscope.widgets.cli", "lab", "--dir", str(tmp_path / "nb"),
         "--", f"--port={port}", "--ip=127.0.0.1", "--IdentityProvider.token=t0"],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}/api/contents/hello.txt?token=t0"
        deadline, body = time.monotonic() + 240, None
        while body is None and time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    body = json.load(response)
            except OSError:
                time.sleep(1)
        assert body is not None, (tmp_path / "lab.log").read_text()[-2000:]
        assert body["name"] == "hello.txt" and body["type"] == "file"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
