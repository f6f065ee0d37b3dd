"""The fused ``rnn`` op (engine/kernels/rnn_fused.py): LSTM, GRU, RNN_TANH, RNN_RELU.

The reference walks every sample on its own, step by step (vectors, no batching), from
the layouts as Paddle documents them (gates i, f, g, o; r, z, c with the reset after the
hidden projection; WeightList = all weights, then all biases).

Matched against Paddle 3.3.1 (static ``paddle.nn.LSTM/GRU/SimpleRNN``, time-major, random
weights and initial states; all 4 modes x {1, 2 layers} x {uni, bi} x {with, without
SequenceLength}): Out and State to 4.4e-16 in float64 and 2.4e-7 in float32; Input,
PreState and WeightList gradients to 1e-15 (float64) and 5e-7 (float32), except for
bidirectional runs with SequenceLength, where Paddle's CPU ``rnn_grad`` is off (by up to
0.6) in the backward direction's gradients (W_hh, and for GRU W_ih, biases and Input too)
while ours agree with central differences to 6e-10. With zero initial states Paddle
agrees to 1e-15 there too: its backward direction takes its zeroed padding output, not the
initial state, as h_{t-1} of its first real step (Paddle's own test uses zero states).

Dropout (training, 3 layers, p = 0.3): with Paddle's own mask (its DropoutState) put in
place of ours, Out and State match Paddle to 2.2e-16 (one mask for every layer, kept
values / float32(1 - p)) and the gradients to 1e-15 (unidirectional; bidirectional as
above). Inference models saved by Paddle with paddle.nn.LSTM / GRU (2 layers,
bidirectional) and SimpleRNN, batch-major (transpose2 around rnn) with SequenceLength,
load and run here matching Paddle to 2.4e-7 (float32).

Cases with State [h, c] (LSTM) run as whole programs: a single-op case gives a duplicable
output one variable. Dropout cases use a fixed ``seed``: the mask repeats on every run
(our generator, not Paddle's mt19937_64), and the reference reads it from DropoutState.
"""
import numpy as np

from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.runtime.scope import Scope
from op_matrix import OpCase, ProgramCase

NOT_PORTED = {
    "TestRNNOp (grad, test_rnn_op.py)": "gradients checked on T=4, N=3 versions (the "
                                        "T=12, N=5 originals take seconds by central "
                                        "differences); forwards ported as they are",
    "TestRNNOp3/4/7 grad": "is_test: Paddle checks no gradient either",
}


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def _step(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of one sample: (h', c')."""
    n = len(h)
    if mode == "LSTM":
        z = w_ih @ x + b_ih + w_hh @ h + b_hh
        i, f, g, o = _sig(z[:n]), _sig(z[n:2 * n]), np.tanh(z[2 * n:3 * n]), _sig(z[3 * n:])
        c = f * c + i * g
        return o * np.tanh(c), c
    if mode == "GRU":
        xs, hs = w_ih @ x + b_ih, w_hh @ h + b_hh
        r, u = _sig(xs[:n] + hs[:n]), _sig(xs[n:2 * n] + hs[n:2 * n])
        cand = np.tanh(xs[2 * n:] + r * hs[2 * n:])
        return u * h + (1 - u) * cand, c
    a = w_ih @ x + b_ih + w_hh @ h + b_hh
    return (np.tanh(a) if mode == "RNN_TANH" else np.maximum(a, 0.0)), c


def rnn_reference(inputs, attrs, keep=None):
    """Out and State of the rnn op; ``keep``: the dropout mask between layers."""
    x, states, w = inputs["Input"], inputs["PreState"], inputs["WeightList"]
    mode, layers = attrs.get("mode", "RNN_TANH"), attrs.get("num_layers", 1)
    dirs = 2 if attrs.get("is_bidirec", False) else 1
    steps, batch = x.shape[:2]
    hidden, count = states[0].shape[-1], layers * dirs
    lengths = inputs.get("SequenceLength")
    lengths = [steps] * batch if lengths is None else [int(v) for v in lengths]
    h_last, c_last = np.zeros(states[0].shape), np.zeros(states[0].shape)
    c0 = states[1] if mode == "LSTM" else np.zeros(states[0].shape)
    layer_in = x.astype(np.float64)
    for layer in range(layers):
        out = np.zeros((steps, batch, dirs * hidden))
        for d in range(dirs):
            j = layer * dirs + d
            args = (w[2 * j], w[2 * j + 1], w[2 * count + 2 * j], w[2 * count + 2 * j + 1])
            for s in range(batch):
                h, c = states[0][j, s], c0[j, s]
                order = range(lengths[s]) if d == 0 else reversed(range(lengths[s]))
                for t in order:  # padding steps: output 0, state untouched
                    h, c = _step(mode, layer_in[t, s], h, c, *args)
                    out[t, s, d * hidden:(d + 1) * hidden] = h
                h_last[j, s], c_last[j, s] = h, c
        p = attrs.get("dropout_prob", 0.0)
        if keep is not None and layer + 1 < layers:
            out_next = out * 0 if p == 1.0 else out * keep / float(np.float32(1) - np.float32(p))
        else:
            out_next = out
        layer_in = out_next
    return {"Out": out, "State": [h_last, c_last] if mode == "LSTM" else [h_last]}


def _inputs(mode, layers, bidirec, steps, batch, size, hidden, seed, lengths=None,
            dtype=np.float64, zero_state=False):
    rng = np.random.default_rng(seed)
    dirs, gates = (2 if bidirec else 1), {"LSTM": 4, "GRU": 3}.get(mode, 1)
    count = layers * dirs
    weights = [None] * (4 * count)
    for j in range(count):
        width = size if j < dirs else dirs * hidden
        weights[2 * j] = rng.uniform(-0.7, 0.7, (gates * hidden, width))
        weights[2 * j + 1] = rng.uniform(-0.7, 0.7, (gates * hidden, hidden))
        weights[2 * count + 2 * j] = rng.uniform(-0.5, 0.5, gates * hidden)
        weights[2 * count + 2 * j + 1] = rng.uniform(-0.5, 0.5, gates * hidden)
    shape = (count, batch, hidden)
    states = [np.zeros(shape) if zero_state else rng.uniform(-1, 1, shape)
              for _ in range(2 if mode == "LSTM" else 1)]
    out = {"Input": rng.uniform(-1, 1, (steps, batch, size)).astype(dtype),
           "PreState": [s.astype(dtype) for s in states],
           "WeightList": [v.astype(dtype) for v in weights]}
    if lengths is not None:
        out["SequenceLength"] = np.asarray(lengths, dtype=np.int64)
    return out


def _attrs(inputs, mode, layers, bidirec, **more):
    return {"mode": mode, "num_layers": layers, "is_bidirec": bidirec,
            "input_size": inputs["Input"].shape[2],
            "hidden_size": inputs["PreState"][0].shape[2], **more}


def _case(name, mode, layers, bidirec, seed, lengths=None, shape=(4, 3, 2, 2), **more):
    """A single-op case (GRU, RNN_*: one State)."""
    inputs = _inputs(mode, layers, bidirec, *shape, seed, lengths)
    return OpCase("rnn", inputs, rnn_reference, attrs=_attrs(inputs, mode, layers, bidirec,
                                                             **more),
                  grad_outputs=("Out", "State"), name=name)


def _check_dropout(outputs, inputs, attrs):
    keep = outputs["DropoutState"]
    assert keep.dtype == np.uint8 and keep.shape == outputs["Out"].shape
    p = attrs["dropout_prob"]
    if p not in (0.0, 1.0):
        assert 0 < keep.mean() < 1, "dropout kept all or nothing"
    expected = rnn_reference(inputs, attrs, keep=keep)
    np.testing.assert_allclose(outputs["Out"], expected["Out"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(outputs["State"][0], expected["State"][0], rtol=1e-6, atol=1e-7)


def _dropout_case(name, mode, bidirec, p, seed=7):
    inputs = _inputs(mode, 2, bidirec, 4, 3, 2, 2, 30 + seed, lengths=[4, 2, 3])
    return OpCase("rnn", inputs, None, check=_check_dropout, name=name,
                  attrs=_attrs(inputs, mode, 2, bidirec, dropout_prob=p, seed=seed),
                  grad_outputs=("Out", "State"))


# ------------------------------------------------------------ whole programs
def _lstm_program(name, layers, bidirec, seed, lengths=None, shape=(3, 2, 2, 2), wrt=None,
                  zero_state=False, use=("out", "h", "c"), **more):
    """A program rnn(LSTM) -> loss = sum(Out*a) + sum(h*b) + sum(c*e) (the terms in
    ``use``): LSTM's State has two variables, which a single-op case cannot declare."""
    def build():
        a = _inputs("LSTM", layers, bidirec, *shape, seed, lengths, zero_state=zero_state)
        attrs = _attrs(a, "LSTM", layers, bidirec, **more)
        ref = rnn_reference(a, attrs)
        rng = np.random.default_rng(seed + 100)
        desc, block = new_program()
        feed = {"x": a["Input"], "h0": a["PreState"][0], "c0": a["PreState"][1]}
        feed.update({f"w{i}": v for i, v in enumerate(a["WeightList"])})
        if lengths is not None:
            feed["seq"] = a["SequenceLength"]
        for n, v in feed.items():
            add_var(block, n, v.shape, v.dtype, stop_gradient=True)
        names = {"Out": ["out"], "DropoutState": ["drop"], "State": ["h", "c"],
                 "Reserve": ["reserve"]}
        for n in ("out", "drop", "h", "c", "reserve"):  # the op's output order
            add_var(block, n, None, "uint8" if n == "drop" else "float64")
        ins = {"Input": ["x"], "PreState": ["h0", "c0"],
               "WeightList": [f"w{i}" for i in range(len(a["WeightList"]))]}
        if lengths is not None:
            ins["SequenceLength"] = ["seq"]
        add_op(block, "rnn", ins, names, attrs)
        terms = []
        for n, like in (("out", ref["Out"]), ("h", ref["State"][0]), ("c", ref["State"][1])):
            if n not in use:  # that output gets no gradient: rnn_grad takes none for it
                continue
            feed[f"{n}_w"] = rng.uniform(0.5, 1.5, like.shape)
            add_var(block, f"{n}_w", like.shape, "float64", stop_gradient=True)
            for v in (f"{n}_prod", f"{n}_sum"):
                add_var(block, v, None, "float64")
            add_op(block, "elementwise_mul", {"X": [n], "Y": [f"{n}_w"]},
                   {"Out": [f"{n}_prod"]})
            add_op(block, "reduce_sum", {"X": [f"{n}_prod"]}, {"Out": [f"{n}_sum"]},
                   {"reduce_all": True})
            terms.append(f"{n}_sum")
        add_var(block, "loss", None, "float64")
        add_op(block, "sum", {"X": terms}, {"Out": ["loss"]})
        chosen = wrt if wrt is not None else (
            ["x", "h0", "c0"] + [f"w{i}" for i in range(len(a["WeightList"]))])
        return ProgramCase(desc, "loss", feed, Scope(),
                           {"out": ref["Out"], "h": ref["State"][0], "c": ref["State"][1]},
                           chosen)
    return OpCase("rnn", {}, program=build, name=name, check_shapes=False,
                  grad=() if wrt == [] else "auto")


# Paddle's test_rnn_op.py: LSTM, T=12, N=5, I=3, H=2, zero initial states, lengths
# 12, 11, 10, 9, 8 unless a test drops them (forwards; gradients on the T=3 programs).
_PADDLE_LENGTHS = [12, 11, 10, 9, 8]
_PADDLE_SHAPE = (12, 5, 3, 2)


def _paddle_port(name, layers=1, bidirec=False, lengths=_PADDLE_LENGTHS, is_test=False):
    return _lstm_program(name, layers, bidirec, 40 + layers, lengths, shape=_PADDLE_SHAPE,
                         wrt=[], zero_state=True, is_test=is_test)


CASES = [
    # GRU / simple RNN: single op (shapes, GPU parity, float64 gradients)
    _case("gru", "GRU", 1, False, 1),
    _case("gru_bi_lengths", "GRU", 1, True, 2, lengths=[4, 1, 3]),
    _case("gru_2layers_bi_lengths", "GRU", 2, True, 3, lengths=[2, 4], shape=(4, 2, 2, 2)),
    _case("gru_2layers_uni", "GRU", 2, False, 4),
    _case("tanh_2layers_uni_lengths", "RNN_TANH", 2, False, 5, lengths=[4, 2, 3]),
    _case("tanh_bi", "RNN_TANH", 1, True, 6),
    _case("relu_bi_lengths", "RNN_RELU", 1, True, 7, lengths=[3, 4, 1]),
    _case("relu_2layers_bi", "RNN_RELU", 2, True, 8, shape=(3, 2, 3, 2)),
    _case("gru_is_test_dropout_ignored", "GRU", 2, True, 9, lengths=[4, 3, 2],
          is_test=True, dropout_prob=0.5),
    _dropout_case("tanh_dropout", "RNN_TANH", False, 0.4),
    _dropout_case("gru_bi_dropout", "GRU", True, 0.3, seed=11),
    _dropout_case("relu_dropout_all", "RNN_RELU", True, 1.0),
    OpCase("rnn", _inputs("GRU", 2, True, 6, 4, 3, 5, 12, [6, 3, 5, 1], dtype=np.float32),
           rnn_reference, attrs={"mode": "GRU", "num_layers": 2, "is_bidirec": True,
                                 "input_size": 3, "hidden_size": 5},
           grad=(), name="float32_gru", rtol=1e-5, atol=1e-6),
    # LSTM: whole programs (float64 gradients of x, h0, c0 and every weight)
    _lstm_program("lstm", 1, False, 21),
    _lstm_program("lstm_bi_lengths", 1, True, 22, lengths=[3, 1]),
    _lstm_program("lstm_2layers_lengths", 2, False, 23, lengths=[2, 3]),
    _lstm_program("lstm_2layers_bi_lengths", 2, True, 24, lengths=[3, 2], shape=(3, 2, 1, 1)),
    _lstm_program("lstm_2layers_bi_dropout_test", 2, True, 25, lengths=[1, 3],
                  shape=(3, 2, 1, 1), dropout_prob=0.5, is_test=True),
    _lstm_program("lstm_loss_on_out_only", 1, True, 26, lengths=[2, 3], use=("out",)),
    _lstm_program("lstm_loss_on_c_only", 2, False, 27, lengths=[3, 1], use=("c",),
                  shape=(3, 2, 1, 2)),
    _lstm_program("lstm_no_state_grads", 1, False, 28, lengths=[3, 2],
                  wrt=["x", "w0", "w1", "w2", "w3"]),
    # ports of Paddle's test_rnn_op.py (forward)
    _paddle_port("paddle_TestRNNOp"),
    _paddle_port("paddle_TestRNNOp1", lengths=None),
    _paddle_port("paddle_TestRNNOp2", bidirec=True, lengths=None),
    _paddle_port("paddle_TestRNNOp3", lengths=None, is_test=True),
    _paddle_port("paddle_TestRNNOp4", bidirec=True, lengths=None, is_test=True),
    _paddle_port("paddle_TestRNNOp5", layers=2),
    _paddle_port("paddle_TestRNNOp6", layers=2, bidirec=True),
    _paddle_port("paddle_TestRNNOp7", layers=2, bidirec=True, is_test=True),
    _paddle_port("paddle_TestRNNOp8", layers=2, bidirec=True, lengths=None),
    _paddle_port("paddle_TestRNNOp9", layers=3),
]
