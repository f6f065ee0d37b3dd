"""Debugger sessions over small programs, shared by the widget tests (one definition).

Each builder makes its program under a fresh ``unique_name.guard()``, so variable names
are the same in every test (``fc_0.tmp_0``, ``fc_0.w_0@GRAD``); the values come from a
generator seeded per call, so a test sees the same numbers whichever tests ran before.
"""
import numpy as np

import fluidscope.designer as fd


def mlp_session(rows=5, features=4, log_of_zero=False, seed=5):
    """x -> fc(8) relu -> fc(3) softmax -> cross entropy -> mean, SGD(0.1), paused before
    its first op. With ``log_of_zero`` a ``log(scale(x, 0))`` branch adds a -inf to the
    loss (a NaN/Inf breakpoint stops there)."""
    rng = np.random.default_rng(seed)
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, features])
        label = fd.data("label", [None, 1], dtype="int64")
        prob = fd.fc(fd.fc(x, 8, act="relu"), 3, act="softmax")
        loss = fd.mean(fd.cross_entropy(prob, label))
        if log_of_zero:
            loss = fd.elementwise_add(loss, fd.mean(fd.log(fd.scale(x, 0.0))))
        fd.optimizer.SGD(0.1).minimize(loss)
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": rng.standard_normal((rows, features)).astype(np.float32),
            "label": rng.integers(0, 3, (rows, 1))}
    return exe.debug(main, feed, [loss], scope)


def rnn_session(steps=(3, 1, 4), features=3, hidden=4, seed=5):
    """recurrent_group: h_t = tanh(x_t W0 + h_{t-1} W1 + b) over sequences of the given
    lengths (3, 1, 4: frames 0..3), then sum(h * wt), with gradients (float64)."""
    rng = np.random.default_rng(seed)
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, features], dtype="float64", lod_level=1)
        wt = fd.data("wt", [None, hidden], dtype="float64")

        def step(x_t):
            h_pre = fd.memory("h", size=hidden)
            return fd.fc([x_t, h_pre], size=hidden, act="tanh", name="h",
                         param_attr=[fd.ParamAttr("w0"), fd.ParamAttr("w1")],
                         bias_attr=fd.ParamAttr("b"))

        out = fd.recurrent_group(step, [x])
        fd.append_backward(fd.reduce_sum(fd.elementwise_mul(out, wt)))
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    total = sum(steps)
    offsets = np.concatenate([[0], np.cumsum(steps)]).tolist()
    feed = {"x": fd.LoDTensor(rng.standard_normal((total, features)), [offsets]),
            "wt": rng.standard_normal((total, hidden))}
    return exe.debug(main, feed, [out], scope)


def sequence_session(seed=5):
    """sequence_pool(sum) over fc of a LoD input with three sequences; returns (session, x)."""
    rng = np.random.default_rng(seed)
    main, startup = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, startup):
        x = fd.data("x", [None, 3], lod_level=1)
        fd.sequence_pool(fd.fc(x, 2), "sum")
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    values = rng.standard_normal((7, 3)).astype(np.float32)
    return exe.debug(main, {"x": fd.LoDTensor(values, [[0, 2, 3, 7]])}, None, scope), values
