"""A DesignError as a user meets it (issue #18, item 6): the message leads with the
user's own line and its text, and the traceback holds the user's frames, not the
recording wrapper, the layer, the helper and ``append_op`` in between."""
import inspect
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import fluidscope.designer as fd
from fluidscope.engine import DesignError

ROOT = pathlib.Path(__file__).resolve().parents[2]
OURS = tuple(str(ROOT / d) for d in ("designer", "engine", "widgets"))


def frames(traceback):
    """(file name, function) of each entry of ``traceback``, outermost first."""
    out = []
    while traceback is not None:
        out.append((traceback.tb_frame.f_code.co_filename, traceback.tb_frame.f_code.co_name))
        traceback = traceback.tb_next
    return out


def ours(entries):
    return [(f, name) for f, name in entries if f.startswith(OURS)]


def _line_of(text, function):
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_layer_error_leads_with_the_user_line_and_keeps_only_user_frames():
    with fd.program_guard(fd.Program(), fd.Program()):
        x = fd.data("x", [None, 3])
        z = fd.data("z", [None, 5])
        with pytest.raises(DesignError) as info:
            fd.elementwise_add(x, z)  # the user's line
    line = _line_of("fd.elementwise_add(x, z)  # the user's line",
                    test_layer_error_leads_with_the_user_line_and_keeps_only_user_frames)
    first, rest = str(info.value).split("\n", 1)
    assert first == f"{__file__}:{line}: fd.elementwise_add(x, z)  # the user's line"
    assert rest.startswith("elementwise_add layer 'elementwise_add_")
    assert "X [-1, 3] and Y [-1, 5] do not broadcast" in rest
    assert "(at " not in rest  # the site is said once, first
    assert info.value.user_line == f"{__file__}:{line}"
    # the user's frame, then the one frame that re-raised it (hidden from IPython/pytest)
    entries = frames(info.tb)
    assert entries[0][1] == "test_layer_error_leads_with_the_user_line_and_keeps_only_user_frames"
    assert ours(entries) == [(str(ROOT / "designer" / "callsite.py"), "call")]
    # fluidscope's own frames stay reachable for whoever debugs fluidscope
    internal = [name for _, name in frames(info.value.internal_traceback)]
    assert "_insert_op" in internal and "append_op" in internal


def test_error_in_a_recurrent_step_leads_with_the_step_line():
    def step(word):
        memory = fd.memory(name="h", size=6)
        h = fd.fc([word, memory], size=6, name="h")
        fd.elementwise_add(word, memory)  # the step's bad line
        return h

    with fd.program_guard(fd.Program(), fd.Program()):
        words = fd.data("w", [None, 1], dtype="int64", lod_level=1)
        embedded = fd.embedding(words, size=[10, 4])
        with pytest.raises(DesignError) as info:
            fd.recurrent_group(step, embedded)
    line = _line_of("the step's bad line", step)
    assert str(info.value).startswith(
        f"{__file__}:{line}: fd.elementwise_add(word, memory)  # the step's bad line\n")
    entries = frames(info.tb)
    # the test's line, the group's re-raise (hidden from IPython as not the last), the
    # step's line: the recording wrapper, recurrent_group, the layer, append_op are gone
    assert [name for _, name in entries] == [
        "test_error_in_a_recurrent_step_leads_with_the_step_line", "call", "step"]
    assert ours(entries) == [(str(ROOT / "designer" / "callsite.py"), "call")]


def test_errors_inside_fluidscope_are_untouched_until_they_reach_user_code():
    # a design builds its layers from fluidscope code: its per-node errors keep their text
    design = fd.Design()
    x = design.add("data", name="x", shape=[None, 3])
    z = design.add("data", name="z", shape=[None, 5])
    design.add("elementwise_add", inputs={"x": x, "y": z})
    errors = design.build().errors
    assert errors and all(not re.match(r"\S+:\d+: ", text) for text in errors.values())


def test_append_op_called_by_the_user_leads_with_its_line():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()):
        x = fd.data("x", [None, 3])
        z = fd.data("z", [None, 5])
        with pytest.raises(DesignError) as info:
            main.global_block().append_op("elementwise_add", {"X": x, "Y": z},
                                          {"Out": x})
        assert str(info.value).startswith(f"{__file__}:")
        first = str(info.value).split("\n")[0]  # a statement of two lines shows its first
        assert first.endswith('append_op("elementwise_add", {"X": x, "Y": z},')
        assert ours(frames(info.tb)) == [(str(ROOT / "designer" / "callsite.py"), "call")]


def test_ipython_shows_the_cell_line_first_and_last(tmp_path):
    """In IPython (as in a notebook) the message names the cell as IPython does, and the
    traceback shows the cell line, one re-raise frame, then the message: no internals."""
    cell = textwrap.dedent("""\
        import fluidscope.designer as fd
        with fd.program_guard(fd.Program(), fd.Program()):
            x = fd.data("x", [None, 3])
            z = fd.data("z", [None, 5])
            s = fd.elementwise_add(x, z)
        """)
    script = textwrap.dedent(f"""\
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance(colors="nocolor")
        shell.run_cell({cell!r}, store_history=True)
        """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=120).stdout
    message = "DesignError: Cell In[1], line 5: s = fd.elementwise_add(x, z)\n"
    assert message in shown, shown
    before = shown[:shown.index(message)]
    assert before.index("Cell In[1], line 5") < before.index("callsite.py")
    for internal in ("recording.py", "math_ops.py", "layer_helper.py", "framework.py"):
        assert internal not in shown


def test_minimize_of_a_non_scalar_loss_leads_with_the_user_line():
    with fd.program_guard(fd.Program(), fd.Program()):
        y = fd.fc(fd.data("x", [None, 3]), 2)
        with pytest.raises(DesignError) as info:
            fd.optimizer.SGD(0.1).minimize(y)  # not a scalar
    first, rest = str(info.value).split("\n", 1)
    assert first.endswith(": fd.optimizer.SGD(0.1).minimize(y)  # not a scalar")
    assert "reduce it to a scalar first" in rest
    assert ours(frames(info.tb)) == [(str(ROOT / "designer" / "callsite.py"), "call")]
