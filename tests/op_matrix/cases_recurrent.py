"""Cases for the recurrent op (engine/recurrent.py), built as whole programs: it owns a
step block, so it cannot run alone. Reference: a per-sequence numpy loop."""
import numpy as np

import fluidscope.designer as fd

from . import OpCase, ProgramCase

D, H, S = 2, 3, 2
LOD = [0, 3, 4, 6]


def _loop(a, reverse):
    """h_t = tanh(x_t W0 + h_{t-1} W1 + s W2 + b), h_{-1} = h0, per sequence."""
    out = np.zeros((LOD[-1], H))
    for i, (s, e) in enumerate(zip(LOD, LOD[1:])):
        h = a["h0"][i]
        for r in (range(e - 1, s - 1, -1) if reverse else range(s, e)):
            h = np.tanh(a["x"][r] @ a["w0"] + h @ a["w1"] + a["s"][i] @ a["w2"] + a["b"])
            out[r] = h
    return out


def _program(reverse):
    def build():
        rng = np.random.default_rng(5)
        main, startup = fd.Program(), fd.Program()
        with fd.program_guard(main, startup), fd.unique_name.guard():
            x = fd.data("x", [None, D], dtype="float64", lod_level=1)
            h0 = fd.data("h0", [None, H], dtype="float64")
            s = fd.data("s", [None, S], dtype="float64")
            wt = fd.data("wt", [None, H], dtype="float64")

            def step(x_t, s_row):
                h_pre = fd.memory("h", H, boot_layer=h0)
                return fd.fc([x_t, h_pre, s_row], H, act="tanh", name="h",
                             param_attr=[fd.ParamAttr("w0"), fd.ParamAttr("w1"),
                                         fd.ParamAttr("w2")], bias_attr=fd.ParamAttr("b"))
            out = fd.recurrent_group(step, [x, fd.StaticInput(s)], reverse=reverse)
            loss = fd.reduce_sum(fd.elementwise_mul(out, wt))
        a = {"x": rng.standard_normal((LOD[-1], D)), "h0": rng.standard_normal((3, H)),
             "s": rng.standard_normal((3, S)), "wt": rng.standard_normal((LOD[-1], H)),
             "w0": rng.standard_normal((D, H)), "w1": rng.standard_normal((H, H)) * 0.5,
             "w2": rng.standard_normal((S, H)), "b": rng.standard_normal(H)}
        scope = fd.Scope()
        fd.Executor().run(startup, scope=scope)
        for p in ("w0", "w1", "w2", "b"):
            scope.find_var(p).get_tensor().set(a[p])
        feed = {"x": fd.LoDTensor(a["x"], [LOD]), "h0": a["h0"], "s": a["s"], "wt": a["wt"]}
        return ProgramCase(main.desc, loss.name, feed, scope, {out.name: _loop(a, reverse)},
                           ["x", "h0", "s", "w0", "w1", "w2", "b"])
    return build


CASES = [
    OpCase("recurrent", {}, program=_program(False), name="boot-static", check_shapes=False),
    OpCase("recurrent", {}, program=_program(True), name="reverse", check_shapes=False),
]
