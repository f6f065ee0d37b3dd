"""Property test: random programs of element-wise ops (unary, binary, broadcast, one var
read by several ops) through the generated backward, against central differences of the
whole program in float64."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fluidscope.engine.autodiff.gradcheck import check_program_grad
from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.runtime.scope import Scope

# smooth ops only (no kinks for central differences to straddle), bounded on the values
# they meet here
UNARY = {"tanh": {}, "sigmoid": {}, "square": {}, "softsign": {},
         "scale": {"scale": 0.7, "bias": 0.2}, "exp": {}}
BINARY = ("elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_max")
FULL, ROW = (2, 3), (3,)


@st.composite
def programs(draw):
    """(ops, number of fed vars): each op reads earlier vars by index. Fed var 0 is
    [2, 3]; the others are [2, 3] or [3] (a row broadcast as Y)."""
    n_fed = draw(st.integers(1, 3))
    shapes = [FULL] + [draw(st.sampled_from([FULL, ROW])) for _ in range(n_fed - 1)]
    ops = []
    for _ in range(draw(st.integers(1, 7))):
        full = [i for i, s in enumerate(shapes) if s == FULL]
        if draw(st.booleans()):
            op = draw(st.sampled_from(sorted(UNARY)))
            x = draw(st.sampled_from(full))
            if op == "exp":  # keep exp's input bounded: feed it a tanh first
                ops.append(("tanh", [x]))
                shapes.append(FULL)
                x = len(shapes) - 1
            ops.append((op, [x]))
        else:
            op = draw(st.sampled_from(BINARY))
            ops.append((op, [draw(st.sampled_from(full)), draw(st.sampled_from(range(len(shapes))))]))
        shapes.append(FULL)
    return ops, shapes[:n_fed]


def _build(ops, fed_shapes):
    desc, block = new_program()
    names = []
    for i, shape in enumerate(fed_shapes):
        names.append(f"in{i}")
        add_var(block, names[-1], shape, "float64")
    for k, (op, args) in enumerate(ops):
        out = f"v{k}"
        add_var(block, out, FULL, "float64")
        ins = {"X": [names[args[0]]]}
        if len(args) > 1:
            ins["Y"] = [names[args[1]]]
        add_op(block, op, ins, {"Out": [out]}, UNARY.get(op, {}))
        names.append(out)
    add_var(block, "loss", (), "float64")
    add_op(block, "reduce_sum", {"X": [names[-1]]}, {"Out": ["loss"]}, {"reduce_all": True})
    return desc


def _reaching_loss(ops, n_fed):
    """Indices of the fed vars the loss depends on (the others get no gradient)."""
    needed, stack = set(), [n_fed + len(ops) - 1]
    while stack:
        var = stack.pop()
        if var in needed:
            continue
        needed.add(var)
        if var >= n_fed:
            stack.extend(ops[var - n_fed][1])
    return sorted(v for v in needed if v < n_fed)


@given(programs(), st.integers(0, 2 ** 16))
def test_generated_backward_matches_central_differences(program, seed):
    ops, fed_shapes = program
    rng = np.random.default_rng(seed)
    feed = {f"in{i}": rng.uniform(-1, 1, s) for i, s in enumerate(fed_shapes)}
    # elementwise_max: keep the two sides apart so no probe crosses the kink
    feed = {k: np.where(np.abs(v) < 0.05, 0.3, v) + 0.01 * i for i, (k, v) in
            enumerate(feed.items())}
    wrt = [f"in{i}" for i in _reaching_loss(ops, len(fed_shapes))]
    check_program_grad(_build(ops, fed_shapes), "loss", feed, wrt, Scope(), rtol=1e-5)
