"""Paddle's fused ``rnn`` op (what ``paddle.nn.LSTM`` / ``GRU`` / ``SimpleRNN`` emit) and
``rnn_grad``: multi-layer, optionally bidirectional, over padded [T, N, I] batches.

Slots and attributes are Paddle 3.3.1's; the layout was checked numerically against it:

* Input is time-major [T, N, I] (the layers put ``transpose2`` ops around the rnn op when
  ``time_major=False``). Out is [T, N, D*H] (D = 2 when bidirectional: forward | backward
  halves on the last axis). PreState / State are [h] or, for LSTM, [h, c], each
  [num_layers*D, N, H], row ``layer*D + direction``.
* WeightList holds every weight first and then every bias: [W_ih, W_hh] for each
  (layer, direction) in that order, then [b_ih, b_hh] likewise. W_ih is [G*H, I] (layer 0)
  or [G*H, D*H], W_hh [G*H, H], biases [G*H]; the gate blocks are in kernels/rnn_cells.py.
* SequenceLength [N] (int): steps at or after a sample's length are padding: its output
  is 0 and its state stays as it was, so the backward direction starts at the last valid
  step and State holds each sample's state at its last valid step.
* Training (is_test False) with dropout_prob > 0 and several layers: the output of every
  layer but the last is dropped (upscale_in_train: kept values / (1 - p)) before the next
  layer reads it, with *one* mask [T, N, D*H] drawn once per call and reused for every
  layer, as Paddle does; DropoutState holds it (uint8; all ones without dropout). Paddle
  draws it from a std::mt19937_64; we draw from ``engine.random`` (the shared generator,
  or one seeded by a nonzero ``seed``), so the masks, not the arithmetic, differ.
* rnn_grad is backprop through time; it agrees with central differences everywhere, and
  with Paddle's rnn_grad except where Paddle is off: bidirectional runs with
  SequenceLength and a nonzero initial state (tests/op_matrix/cases_rnn_fused.py).
* Reserve is our own layout (Paddle's is intermediate too): per (layer, direction, step)
  the blocks the cell's backward needs (rnn_cells.BLOCKS), then the (dropped) inputs of
  layers 1.. . The grad op reads it instead of recomputing the forward.
"""
import numpy as np

from .. import random as fr
from ..errors import ShapeError
from ..ir.proto import framework_pb2 as pb
from ..ir.registry import Attr, AttrType, GradSpec, Slot, at_least, one_of, register, wanted
from . import rnn_cells as cells


# ------------------------------------------------------------------ checks
def _fail(op, message):
    raise ShapeError(f"op {op}: {message}")


def _check(op, attrs, x, pre_state, weights, seq_len):
    """(mode, layers, directions, hidden) after checking every input's shape."""
    mode, layers = attrs["mode"], attrs["num_layers"]
    dirs, gates = (2 if attrs["is_bidirec"] else 1), cells.GATES[mode]
    if x.ndim != 3:
        _fail(op, f"Input has shape {list(x.shape)}; it must be time-major [T, N, input_size]")
    n_states = 2 if mode == "LSTM" else 1
    if len(pre_state) != n_states:
        _fail(op, f"PreState has {len(pre_state)} tensors; mode {mode} takes {n_states} "
                  f"({'[h, c]' if n_states == 2 else '[h]'})")
    hidden = pre_state[0].shape[-1] if pre_state[0].ndim == 3 else -1
    for k, s in enumerate(pre_state):
        if s.shape != (layers * dirs, x.shape[1], hidden):
            _fail(op, f"PreState[{k}] has shape {list(s.shape)}, expected "
                      f"[num_layers*directions, N, H] = [{layers * dirs}, {x.shape[1]}, H] "
                      f"for Input {list(x.shape)}")
    count = layers * dirs
    if len(weights) != 4 * count:
        _fail(op, f"WeightList has {len(weights)} tensors; {layers} layer(s) x {dirs} "
                  f"direction(s) take {4 * count} (W_ih, W_hh each, then b_ih, b_hh each)")
    for j in range(count):
        width = x.shape[2] if j < dirs else dirs * hidden
        for k, shape in ((2 * j, (gates * hidden, width)), (2 * j + 1, (gates * hidden, hidden)),
                         (2 * count + 2 * j, (gates * hidden,)),
                         (2 * count + 2 * j + 1, (gates * hidden,))):
            if weights[k].shape != shape:
                _fail(op, f"WeightList[{k}] has shape {list(weights[k].shape)}, expected "
                          f"{list(shape)} (mode {mode}: {gates} gate(s) of H={hidden}; layer "
                          f"{j // dirs}, direction {j % dirs})")
    if attrs["hidden_size"] != hidden:
        _fail(op, f"attribute hidden_size={attrs['hidden_size']} but PreState says H={hidden}")
    if seq_len is not None and seq_len.shape != (x.shape[1],):
        _fail(op, f"SequenceLength has shape {list(seq_len.shape)}, expected [N] = "
                  f"[{x.shape[1]}] for Input {list(x.shape)}")
    return mode, layers, dirs, hidden


def _mask(op, xp, seq_len, steps):
    """[T, N, 1] bool: step t of sample n is real (not padding); None without lengths."""
    if seq_len is None:
        return None
    lengths = xp.asarray(seq_len).astype(np.int64)
    if lengths.size and (int(lengths.min()) < 0 or int(lengths.max()) > steps):
        _fail(op, f"SequenceLength {lengths.tolist()} must lie in [0, T] = [0, {steps}]")
    return (xp.arange(steps)[:, None] < lengths[None, :])[:, :, None]


def _layer_weights(weights, count, j):
    return weights[2 * j], weights[2 * j + 1], weights[2 * count + 2 * j], \
        weights[2 * count + 2 * j + 1]


def _reserve_views(reserve, mode, layers, dirs, steps, batch, hidden):
    """(per-step blocks [L, D, T, N, K*H], layer inputs [L-1, T, N, D*H]) of Reserve."""
    k = cells.BLOCKS[mode]
    cut = layers * dirs * steps * batch * k * hidden
    return (reserve[:cut].reshape(layers, dirs, steps, batch, k * hidden),
            reserve[cut:].reshape(layers - 1, steps, batch, dirs * hidden))


def _reserve_size(mode, layers, dirs, steps, batch, hidden):
    return steps * batch * hidden * dirs * (layers * cells.BLOCKS[mode] + layers - 1)


def _drop_scale(p):
    """Paddle divides by ``static_cast<T>(1.0f - p)``: 1 - p rounded to float32."""
    return float(np.float32(1.0) - np.float32(p))


def _dropped(values, keep, p):
    if p == 1.0:
        return values * 0
    out = values * keep
    out /= _drop_scale(p)
    return out


# ----------------------------------------------------------------- forward
def _direction(xp, mode, inp, h, c, w, mask, reverse, store, out):
    """Run one direction of one layer; writes its outputs into ``out`` [T, N, H]."""
    w_ih, w_hh, b_ih, b_hh = w
    steps = inp.shape[0]
    pre = (inp.reshape(-1, inp.shape[2]) @ w_ih.T).reshape(steps, inp.shape[1], -1)
    pre += b_ih
    if mode != "GRU":  # GRU's b_hh stays with h W_hh^T: its candidate block is reset-gated
        pre += b_hh
    w_hh_t = xp.ascontiguousarray(w_hh.T)
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        h_new, c_new = cells.forward(xp, mode, pre[t], h, c, w_hh_t, b_hh, store[t])
        if mask is None:
            out[t], h, c = h_new, h_new, c_new
        else:
            m = mask[t]
            out[t] = xp.where(m, h_new, 0)
            h = xp.where(m, h_new, h)
            c = None if c is None else xp.where(m, c_new, c)
    return h, c


def _rnn(xp, attrs, x, pre_state, weights, seq_len):
    mode, layers, dirs, hidden = _check("rnn", attrs, x, pre_state, weights, seq_len)
    steps, batch = x.shape[:2]
    mask = _mask("rnn", xp, seq_len, steps)
    reserve = xp.empty(_reserve_size(mode, layers, dirs, steps, batch, hidden), x.dtype)
    blocks, layer_in = _reserve_views(reserve, mode, layers, dirs, steps, batch, hidden)
    p, test = attrs["dropout_prob"], attrs["is_test"]
    drop_state = None if test else xp.ones((steps, batch, dirs * hidden), dtype=xp.uint8)
    states = [xp.empty_like(s) for s in pre_state]
    inp, keep = x, None
    for layer in range(layers):
        out = xp.empty((steps, batch, dirs * hidden), dtype=x.dtype)
        for d in range(dirs):
            j = layer * dirs + d
            h, c = _direction(xp, mode, inp, pre_state[0][j],
                              pre_state[1][j] if mode == "LSTM" else None,
                              _layer_weights(weights, layers * dirs, j), mask, d == 1,
                              blocks[layer, d], out[:, :, d * hidden:(d + 1) * hidden])
            states[0][j] = h
            if c is not None:
                states[1][j] = c
        if layer + 1 < layers:
            if not test and p != 0.0:
                if keep is None:  # one mask for every layer, as Paddle's kernel
                    keep = fr.generator(xp, attrs["seed"]).random(
                        out.shape, dtype=xp.float32) >= p
                    drop_state[...] = keep
                out = _dropped(out, keep, p)
            layer_in[layer] = out
            inp = layer_in[layer]
    return out, drop_state, states, reserve


# ---------------------------------------------------------------- backward
def _direction_grad(xp, mode, store, d_out, dh, dc, w_hh, mask, reverse):
    """Backprop through time of one direction; returns (d_pre, d_hh) [T, N, G*H] and the
    gradients of its initial h (and c)."""
    steps = store.shape[0]
    d_pre = xp.empty((steps, store.shape[1], cells.GATES[mode] * w_hh.shape[1]), store.dtype)
    d_hh = xp.empty_like(d_pre) if mode == "GRU" else d_pre
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        # (dh, dc): gradients of the state after step t; split them into the part that
        # reaches the step's cell and the part a padding step passes straight through
        if mask is None:
            dh_new, dc_new, dh, dc = dh + d_out[t], dc, 0, 0
        else:
            m = mask[t]
            dh_new, dh = xp.where(m, dh + d_out[t], 0), xp.where(m, 0, dh)
            dc_new, dc = (None, 0) if dc is None else (xp.where(m, dc, 0), xp.where(m, 0, dc))
        d_pre[t], d_hh_t, dh_prev, dc_prev = cells.backward(xp, mode, store[t], dh_new, dc_new,
                                                            w_hh)
        if d_hh is not d_pre:
            d_hh[t] = d_hh_t
        dh = dh_prev + dh
        dc = None if dc_prev is None else dc_prev + dc
    return d_pre, d_hh, dh, dc


def _rnn_grad(xp, attrs, x, pre_state, weights, seq_len, out, drop_state, reserve, d_out,
              d_state):
    mode, layers, dirs, hidden = _check("rnn_grad", attrs, x, pre_state, weights, seq_len)
    steps, batch = x.shape[:2]
    count, k, hp = layers * dirs, cells.BLOCKS[mode], cells.H_PREV[mode]
    mask = _mask("rnn_grad", xp, seq_len, steps)
    blocks, layer_in = _reserve_views(reserve, mode, layers, dirs, steps, batch, hidden)
    p = attrs["dropout_prob"]
    dropped = not attrs["is_test"] and p != 0.0 and layers > 1
    d_layer = d_out if d_out is not None else xp.zeros((steps, batch, dirs * hidden), x.dtype)
    d_state = list(d_state or []) + [None] * 2
    d_final = [g if g is not None else xp.zeros_like(s) for g, s in zip(d_state, pre_state)]
    d_pre_state = [xp.empty_like(s) for s in pre_state]
    d_weights = [None] * (4 * count)
    dx = None
    for layer in range(layers - 1, -1, -1):
        inp = x if layer == 0 else layer_in[layer - 1]
        flat_in = inp.reshape(steps * batch, -1)
        d_inp = xp.zeros((steps * batch, inp.shape[2]), x.dtype)
        for d in range(dirs):
            j = layer * dirs + d
            w_ih, w_hh = weights[2 * j], weights[2 * j + 1]
            d_pre, d_hh, dh0, dc0 = _direction_grad(
                xp, mode, blocks[layer, d], d_layer[:, :, d * hidden:(d + 1) * hidden],
                d_final[0][j], d_final[1][j] if mode == "LSTM" else None, w_hh, mask, d == 1)
            d_pre, d_hh = d_pre.reshape(steps * batch, -1), d_hh.reshape(steps * batch, -1)
            h_prev = blocks[layer, d].reshape(steps * batch, k, hidden)[:, hp]
            d_weights[2 * j] = d_pre.T @ flat_in
            d_weights[2 * j + 1] = d_hh.T @ h_prev
            d_weights[2 * count + 2 * j] = d_pre.sum(axis=0)
            d_weights[2 * count + 2 * j + 1] = d_hh.sum(axis=0)
            d_inp += d_pre @ w_ih
            d_pre_state[0][j] = dh0
            if mode == "LSTM":
                d_pre_state[1][j] = dc0
        d_inp = d_inp.reshape(inp.shape)
        if layer == 0:
            dx = d_inp
        else:
            d_layer = _dropped(d_inp, drop_state, p) if dropped else d_inp
    return (dx if wanted(attrs, 0) else None, d_pre_state if wanted(attrs, 1) else None,
            d_weights if wanted(attrs, 2) else None)


# ----------------------------------------------------------- shape inference
def _infer_rnn(ctx):
    x, states = ctx.input("Input"), ctx.inputs("PreState")
    mode, layers = ctx.attr("mode"), ctx.attr("num_layers")
    dirs, hidden = (2 if ctx.attr("is_bidirec") else 1), ctx.attr("hidden_size")
    if len(x.shape) != 3:
        ctx.fail(f"Input {list(x.shape)} must be time-major [T, N, input_size]", slot="Input")
    want = 2 if mode == "LSTM" else 1
    if len(states) != want:
        ctx.fail(f"mode {mode} takes {want} PreState tensor(s), got {len(states)}",
                 slot="PreState")
    for k, s in enumerate(states):
        expect = (layers * dirs, x.shape[1], hidden)
        if len(s.shape) != 3 or any(a not in (-1, b) and b != -1 for a, b in zip(s.shape, expect)):
            ctx.fail(f"PreState[{k}] {list(s.shape)} must be [num_layers*directions, N, "
                     f"hidden_size] = {list(expect)}", slot="PreState")
    n_weights = len(ctx.inputs("WeightList"))
    if n_weights != 4 * layers * dirs:
        ctx.fail(f"{layers} layer(s) x {dirs} direction(s) take {4 * layers * dirs} "
                 f"weights, got {n_weights}", slot="WeightList")
    seq = ctx.input("SequenceLength")
    if seq is not None and (len(seq.shape) != 1 or -1 not in (seq.shape[0], x.shape[1])
                            and seq.shape[0] != x.shape[1]):
        ctx.fail(f"SequenceLength {list(seq.shape)} must be [N] for Input {list(x.shape)}",
                 slot="SequenceLength")
    steps, batch = x.shape[:2]
    ctx.set_output("Out", [steps, batch, dirs * hidden], like=x)
    ctx.set_output("DropoutState", [steps, batch, dirs * hidden], dtype=pb.VarType.UINT8,
                   like=x)
    for k, s in enumerate(states):
        ctx.set_output("State", [layers * dirs, batch, hidden], like=x, index=k)
    known = steps >= 0 and batch >= 0
    ctx.set_output("Reserve", [_reserve_size(mode, layers, dirs, steps, batch, hidden)
                               if known else -1], like=x)


register(
    "rnn",
    inputs=[Slot("Input", doc="[T, N, I] time-major"),
            Slot("PreState", duplicable=True, doc="[h] or [h, c] (LSTM), each [L*D, N, H]"),
            Slot("WeightList", duplicable=True,
                 doc="W_ih, W_hh per (layer, direction), then b_ih, b_hh likewise"),
            Slot("SequenceLength", dispensable=True, no_grad=True,
                 doc="[N] valid steps per sample; later steps are padding")],
    outputs=[Slot("Out", doc="[T, N, D*H]"),
             Slot("DropoutState", dispensable=True, doc="uint8 dropout mask between layers"),
             Slot("State", duplicable=True, doc="final [h] or [h, c], each [L*D, N, H]"),
             Slot("Reserve", intermediate=True, doc="what rnn_grad needs (our own layout)")],
    attrs=[Attr("dropout_prob", AttrType.FLOAT, 0.0,
                lambda v: None if 0.0 <= v <= 1.0 else "must be in [0, 1]",
                doc="dropout between layers in training (upscale_in_train)"),
           Attr("is_bidirec", AttrType.BOOLEAN, False, doc="a backward direction too"),
           Attr("input_size", AttrType.INT, 10, doc="I (informational; Input says it)"),
           Attr("hidden_size", AttrType.INT, 100, at_least(1), doc="H"),
           Attr("num_layers", AttrType.INT, 1, at_least(1), doc="stacked layers"),
           Attr("mode", AttrType.STRING, "RNN_TANH", one_of(*cells.GATES),
                doc="cell: LSTM, GRU, RNN_TANH or RNN_RELU"),
           Attr("seed", AttrType.INT, 0, doc="dropout seed; 0: the shared generator"),
           Attr("is_test", AttrType.BOOLEAN, False, doc="inference: no dropout")],
    infer_shape=_infer_rnn, kernel=_rnn, share_lod=(),
    grad=GradSpec(_rnn_grad, inputs=("Input", "PreState", "WeightList", "SequenceLength"),
                  outputs=("Out", "DropoutState", "Reserve"), out_grads=("Out", "State"),
                  in_grads=("Input", "PreState", "WeightList")),
    doc="fused multi-layer (bi)LSTM / GRU / simple RNN over padded [T, N, I] batches",
    category="rnn")
