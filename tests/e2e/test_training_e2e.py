"""TrainingMonitor in a real JupyterLab: ``train`` runs in the kernel's background, the
monitor's bar and curve move while the cell is already done, and the stop button ends
the run cleanly between two steps (status "stopped", every step recorded, the
parameters finite and usable).
"""
import re


import jlab

jlab.skip_unless_runnable()

from playwright.sync_api import expect  # noqa: E402  (after the skip: may be missing)

START = """\
import time
import numpy as np
import fluidscope.designer as fd
from fluidscope.widgets import train

main, startup = fd.Program(), fd.Program()
with fd.program_guard(main, startup):
    x = fd.data("x", [None, 8], "float32")
    y = fd.data("y", [None, 1], "int64")
    loss = fd.mean(fd.softmax_with_cross_entropy(fd.fc(fd.fc(x, 32, act="relu"), 3), y))
    fd.optimizer.SGD(learning_rate=0.05).minimize(loss)
exe, scope = fd.Executor(), fd.Scope()
exe.run(startup, scope=scope)
rng = np.random.default_rng(0)
X = rng.normal(size=(512, 8)).astype("float32")
Y = X[:, :3].argmax(axis=1).astype("int64")[:, None]

def reader():
    for s in range(0, 512, 32):
        time.sleep(0.002)  # a reader waiting on its data; keeps the kernel responsive
        yield {"x": X[s:s + 32], "y": Y[s:s + 32]}

# far more epochs than the test lets it run: only the stop button ends it
run = train(exe, main, reader, epochs=100_000, fetch_list=[loss], scope=scope)
print("THREADED", run.threaded)
"""
AFTER_STOP = """\
result = run.wait(60)
params = [scope.find_var(p.name).get_tensor() for p in main.global_block().all_parameters()]
(check,) = exe.run(main, feed={"x": X[:32], "y": Y[:32]}, fetch_list=[loss], scope=scope)
print("RESULT", result.status, result.stopped, run.running, result.stop_reason)
print("STEPS", result.steps, run.monitor.done, len(result.losses))
print("FINITE", bool(np.isfinite(result.losses).all()),
      all(bool(np.isfinite(np.asarray(p)).all()) for p in params), bool(np.isfinite(check)))
"""
STEP = re.compile(r"step (\d+)")


def test_stop_button_stops_a_background_run_cleanly(lab, page, network):
    lab.write_notebook("training_stop.ipynb", [START, AFTER_STOP])
    nb = jlab.open_notebook(page, lab, "training_stop.ipynb")
    nb.run_cell(0)  # returns while the run goes on in a thread
    assert "THREADED True" in nb.output_text(0)

    monitor = nb.widget(0, ".fs-train")
    expect(monitor).to_have_attribute("data-status", "running")
    position = monitor.locator(".fs-train-position")
    # the page keeps receiving progress after the cell is done
    expect(position).to_have_text(re.compile(r"step ([2-9]\d|\d{3,})\b"), timeout=60_000)
    painted = monitor.locator("canvas.fs-train-curve").evaluate(
        """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                  let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }""")
    assert painted > 0, "the loss curve drew nothing"
    stop = monitor.locator("button.fs-train-stop")
    expect(stop).to_be_enabled()
    stop.click()

    expect(monitor).to_have_attribute("data-status", "stopped")
    expect(monitor.locator(".fs-train-status")).to_have_text("stopped")
    expect(monitor.locator(".fs-train-message")).to_contain_text("stop() was called")
    expect(stop).to_be_disabled()
    stopped_at = int(STEP.search(position.inner_text()).group(1))

    nb.run_cell(1)
    out = nb.output_text(1)
    assert "RESULT stopped True False stop() was called" in out, out
    steps = re.search(r"STEPS (\d+) (\d+) (\d+)", out).groups()
    assert len(set(steps)) == 1, out  # every step that started finished and was recorded
    assert int(steps[0]) >= stopped_at >= 20, (out, stopped_at)
    assert "FINITE True True True" in out, out
    # nothing moves after the stop: the monitor's last word stays
    expect(monitor).to_have_attribute("data-status", "stopped")
    expect(position).to_have_text(re.compile(rf"step {steps[0]}\b"))
    assert network.outside == [] and network.requests
