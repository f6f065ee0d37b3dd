"""PaddlePaddle 3.3.1 (the test venv's ``.venv-paddle``) as the oracle of the tests that
compare with Paddle: a script of the test's runs there in legacy static mode (so it saves
``.pdmodel``/``.pdiparams``), as an argv list with no shell; a failure fails the test with
Paddle's stderr. Tests that need it are skipped where ``.venv-paddle`` is missing (CI
installs it: ``bash scripts/setup.sh --test``)."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PADDLE_PYTHON = ROOT / ".venv-paddle" / "bin" / "python"

needs_paddle = pytest.mark.skipif(
    not PADDLE_PYTHON.exists(), reason="PaddlePaddle 3.3.1 is not installed: run "
    "`bash scripts/setup_paddle_venv.sh` to create .venv-paddle")


def run_paddle_file(script, *args, cwd, timeout=300):
    """Run the script file ``script`` under Paddle with ``args`` (paths are passed as text)
    in ``cwd``; fails the test with Paddle's stderr when it exits non-zero. Returns its
    stdout."""
    if not PADDLE_PYTHON.exists():
        pytest.skip("PaddlePaddle 3.3.1 is not installed (.venv-paddle)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(FLAGS_enable_pir_api="0", GLOG_minloglevel="2")
    done = subprocess.run([str(PADDLE_PYTHON), str(script), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=str(cwd))
    if done.returncode != 0:
        pytest.fail(f"{pathlib.Path(script).name} {' '.join(map(str, args[:1]))} failed under "
                    f".venv-paddle:\n{done.stderr[-4000:]}")
    return done.stdout


def run_paddle(script, folder, *args, name="make.py", timeout=300):
    """Write ``script`` to ``folder/name`` and run it under Paddle with ``args`` (paths are
    passed as text); fails the test with Paddle's stderr when it exits non-zero."""
    folder = pathlib.Path(folder)
    (folder / name).write_text(script)
    return run_paddle_file(folder / name, *args, cwd=folder, timeout=timeout)
