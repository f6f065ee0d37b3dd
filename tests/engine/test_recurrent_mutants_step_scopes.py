"""StepScopes, the frames a recurrent op keeps (engine/recurrent/step_scopes.py): what a
person reading a run (and the debugger undoing one) relies on. Each frame's values by name,
as a Scope and as a dict, exactly the names the frame set; frames out of range and names not
in the step block are errors naming both; ``pop`` forgets only the last frame and its
cached scope; tensors in a frame's scope carry the place the program ran on."""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine.errors import FluidscopeError
from fluidscope.engine.runtime.place import CPUPlace
from test_recurrent import _run

LOD = [0, 3, 4, 8]  # sequence 2 has 4 steps, sequence 0 has 3, sequence 1 has 1


class _ThisCPU(CPUPlace):
    """Host memory, equal only to itself: tells which place a tensor was given."""

    def __eq__(self, other):
        return other is self

    def __hash__(self):
        return id(self)


def _frames(place=None):
    main, exe, scope, feed = _run(LOD, boot=True)
    if place is not None:
        exe = fd.Executor(place)
    name = next(op.output("step_scopes")[0] for op in main.global_block().ops
                if op.type == "recurrent")
    frames, = exe.run(main, feed=feed, fetch_list=[name], scope=scope)
    return frames, feed["x"].numpy()


def _rows_of_frame(t):
    # sorted longest first (stable): sequences 2, 0, 1 at offsets 4, 0, 3 with lengths 4, 3, 1
    return [s + t for s, n in ((4, 4), (0, 3), (3, 1)) if t < n]


def test_each_frame_reads_its_own_in_link_rows_by_name_as_dict_tensor_and_scope():
    frames, x = _frames()
    assert frames.frames_run() == [0, 1, 2, 3]
    assert [frames.batch_size(t) for t in range(4)] == [3, 2, 2, 1]
    assert repr(frames) == "StepScopes(4 frames, batch sizes [3, 2, 2, 1])"
    for t in range(4):
        rows = x[_rows_of_frame(t)]
        np.testing.assert_array_equal(frames.tensor(t, "x"), rows)
        values = frames.frame_values(t)
        np.testing.assert_array_equal(values["x"], rows)
        scope = frames.scope(t)
        assert sorted(scope.local_var_names()) == sorted(values)
        for name, value in values.items():
            np.testing.assert_array_equal(scope.find_var(name).get_tensor().numpy(), value)
    # every frame set the same step vars: the memory, the in-link and what the fc made
    assert None not in frames.frame_values(0)
    assert set(frames.frame_values(0)) == set(frames.frame_values(3))
    assert set(frames.var_names) >= set(frames.frame_values(0)) and None not in frames.var_names
    assert frames.frame_values(7) == {}  # a frame that did not run holds nothing


def test_a_frame_and_a_name_out_of_range_are_errors_naming_them():
    frames, _ = _frames()
    frames.tensor(0, "x")  # the first and the last frame exist
    frames.scope(3)
    for t in (4, -1):
        with pytest.raises(FluidscopeError, match=rf"frame {t} does not exist; this run has 4 "
                                                  "frames"):
            frames.tensor(t, "x")
        with pytest.raises(FluidscopeError, match=rf"frame {t} does not exist"):
            frames.scope(t)
    with pytest.raises(FluidscopeError, match=r"'nope' is not a variable of the step block; "
                                              r"it has \[.*'x'.*\]"):
        frames.tensor(1, "nope")


def test_popping_the_last_frame_forgets_it_and_its_scope_and_refuses_another_frame():
    frames, x = _frames()
    old = frames.scope(3)
    with pytest.raises(FluidscopeError, match=r"frame 2 is not the last frame of StepScopes\(4 "
                                              r"frames, batch sizes \[3, 2, 2, 1\]\)"):
        frames.pop(2)
    assert len(frames) == 4
    frames.pop(3)
    assert len(frames) == 3 and frames.frames_run() == [0, 1, 2]
    # the frame starts again with only its in-link bound (the debugger re-entering it)
    vals = [None] * len(frames.plan.names)
    vals[frames.plan.slot["x"]] = x[[7]]
    frames.append(3, vals)
    fresh = frames.scope(3)
    assert fresh is not old and fresh.local_var_names() == ["x"]
    assert list(frames.frame_values(3)) == ["x"]
    for t in (3, 2, 1, 0):
        frames.pop(t)
    with pytest.raises(FluidscopeError, match="frame 0 is not the last frame of StepScopes"
                                              r"\(0 frames"):
        frames.pop(0)


def test_a_frames_scope_holds_tensors_on_the_place_the_program_ran_on():
    place = _ThisCPU()
    frames, _ = _frames(place)
    tensor = frames.scope(1).find_var("x").get_tensor()
    assert tensor.place is place
