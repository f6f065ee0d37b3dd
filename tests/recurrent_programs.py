"""The recurrent-group programs the engine's bits tests share (``from recurrent_programs
import ...``): a group over a LoD input ``x`` of ``width`` columns, the loss
``sum(h * wt)`` with its backward, and a feed for it.

``group_program(build_h, ...)`` makes the program around a group that ``build_h(x)``
makes; ``lstm_over`` and ``gru_over`` are the two library groups over ``x``'s projection
by ``w_x`` (parameters named as the benchmarks name them)."""
import numpy as np

import fluidscope.designer as fd


def lstm_over(x, hidden):
    """``lstmemory_group`` over ``fc(x, 4 * hidden)`` (parameters w_x, w, b): its h."""
    proj = fd.fc(x, 4 * hidden, bias_attr=False, param_attr=fd.ParamAttr(name="w_x"))
    return fd.lstmemory_group(proj, hidden, name="lstm", use_peepholes=False,
                              param_attr=fd.ParamAttr(name="w"), bias_attr=fd.ParamAttr(name="b"))


def gru_over(x, hidden):
    """``gru_group`` over ``fc(x, 3 * hidden)`` (parameters w_x, w_ur, w_c, b): its h."""
    proj = fd.fc(x, 3 * hidden, bias_attr=False, param_attr=fd.ParamAttr(name="w_x"))
    return fd.gru_group(proj, hidden, name="gru",
                        param_attr=[fd.ParamAttr(name="w_ur"), fd.ParamAttr(name="w_c")],
                        bias_attr=fd.ParamAttr(name="b"))


def group_program(build_h, width, hidden, dtype):
    """(main, startup, h): ``h = build_h(x)`` of a LoD input ``x`` [N, width] (its gradient
    wanted), the loss ``sum(h * wt)`` for a feed ``wt`` [N, hidden], and its backward."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        x = fd.data("x", [None, width], dtype, lod_level=1)
        x.stop_gradient = False
        wt = fd.data("wt", [None, hidden], dtype)
        h = build_h(x)
        fd.append_backward(fd.reduce_sum(fd.elementwise_mul(h, wt)))
    return main, startup, h


def group_feed(lod, width, hidden, dtype, seed, scale=1):
    """A feed of ``group_program``: x (standard normal times ``scale``, LoD ``lod``), wt."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((lod[-1], width))
    return {"x": fd.LoDTensor((scale * x if scale != 1 else x).astype(dtype), [lod]),
            "wt": rng.standard_normal((lod[-1], hidden)).astype(dtype)}


def forward_control(exe, main):
    """The prepared ``recurrent`` op of ``main`` (its step block's plan and drivers)."""
    plan = exe.prepare(main)
    return next(s.control for s in plan.steps if s.type == "recurrent")


def same_bytes_every_frame(ours, theirs, frames, label):
    """Assert two runs' step scopes (``FrameHistory``) hold ``frames`` frames with the same
    names and, per value, the same dtype, shape and bytes."""
    assert len(ours) == len(theirs) == frames, label
    for t in range(frames):
        a, b = ours.frame_values(t), theirs.frame_values(t)
        assert sorted(a) == sorted(b), (label, t)
        for name, value in a.items():
            assert value.dtype == b[name].dtype and value.shape == b[name].shape, (label, t, name)
            assert value.tobytes() == b[name].tobytes(), f"{label}, frame {t}: {name}"


def stand_after(sess, op_index, frame, move):
    """Move the debugger ``sess`` by ``move`` (``sess.step`` or ``sess.step_into``) until it
    stands just past op ``op_index`` of the step block in ``frame``."""
    while not (sess.position.frame == frame and sess.position.op_index == op_index):
        assert not sess.finished, f"the run ended before op #{op_index} of frame {frame}"
        move()
