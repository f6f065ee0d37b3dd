"""Paddle's fused recurrent ops over LoD sequences: ``lstm`` and ``gru`` (and their grads).

The x-projection is done outside (an ``fc`` to [T, 4D] / [T, 3D]); these ops run the
recurrence in the sequence-to-batch layout (``engine/seqbatch.py``): one matmul of the
alive prefix ``h[:n_t] @ W`` per frame plus fused element-wise gate math, no padding.

Layouts, confirmed against Paddle 3.3.1's own kernels (legacy static mode):

* lstm: the 4 gate blocks of Input, Weight [D, 4D] and Bias[:, :4D] are, in order,
  candidate c~, input i, forget f, output o. With ``use_peepholes`` Bias is [1, 7D] and
  Bias[:, 4D:7D] are the peephole weights w_ic, w_fc, w_oc (element-wise)::

      i = gate(x_i + h_{t-1} W_i + b_i + w_ic * c_{t-1})
      f = gate(x_f + h_{t-1} W_f + b_f + w_fc * c_{t-1})
      c~ = candidate(x_c + h_{t-1} W_c + b_c)
      c_t = f * c_{t-1} + i * c~
      o = gate(x_o + h_{t-1} W_o + b_o + w_oc * c_t)
      h_t = o * cell(c_t)

  BatchGate holds the activated [c~, i, f, o] and BatchCellPreAct holds cell(c_t) (after
  the activation, despite the name), both in batch layout. Paddle's lstm_grad ignores a
  gradient on Cell; ours takes it (a dispensable Cell@GRAD input).
* gru: the 3 blocks of Input and Bias [1, 3D] are update u, reset r, candidate c. Weight
  [D, 3D] is split by *memory*, not by columns: its first 2*D*D values are W_ur [D, 2D],
  the last D*D are W_c [D, D] (``w.reshape(-1)[:2DD].reshape(D, 2D)``)::

      [u, r] = gate(x_ur + b_ur + h_{t-1} W_ur);  c = act(x_c + b_c + (r * h_{t-1}) W_c)
      h_t = (1 - u) * h_{t-1} + u * c     (origin_mode False, Paddle's default)
      h_t = u * h_{t-1} + (1 - u) * c     (origin_mode True, as in Cho et al.)

  BatchGate holds activated [u, r, c], BatchResetHiddenPrev r * h_{t-1}, BatchHidden h.
* H0 / C0 are [num_sequences, D], one row per sequence in LoD order; no H0 means zeros.

The backward walks the frames in reverse with the same layout; every factor that does
not depend on the incoming gradient (activation derivatives, peephole terms) is computed
for the whole batch before the loop, so a frame costs a handful of array calls.
"""
import numpy as np

from ..errors import ExecutionError
from ..registry import Attr, AttrType, GradSpec, Slot, one_of, register, wanted
from ..seqbatch import seq_batch

# ------------------------------------------------------------- activations
# forward(xp, src, out) writes act(src) into out (out may be src); deriv(xp, y) returns
# act'(.) expressed through the activated value y, as a new array.


def _sigmoid(xp, src, out):
    # 0.5 * tanh(x / 2) + 0.5: sigmoid without exp overflow warnings for large |x|.
    xp.multiply(src, 0.5, out=out)
    xp.tanh(out, out=out)
    xp.multiply(out, 0.5, out=out)
    xp.add(out, 0.5, out=out)


def _d_sigmoid(xp, y):
    d = 1.0 - y
    d *= y
    return d


def _tanh(xp, src, out):
    xp.tanh(src, out=out)


def _d_tanh(xp, y):
    d = y * y
    xp.subtract(1.0, d, out=d)
    return d


def _relu(xp, src, out):
    xp.maximum(src, 0, out=out)


def _d_relu(xp, y):
    return (y > 0).astype(y.dtype)


def _identity(xp, src, out):
    if out is not src:
        out[...] = src


def _d_identity(xp, y):
    return xp.ones_like(y)


ACTIVATIONS = {"sigmoid": (_sigmoid, _d_sigmoid), "tanh": (_tanh, _d_tanh),
               "relu": (_relu, _d_relu), "identity": (_identity, _d_identity),
               "": (_identity, _d_identity)}  # Paddle reads "" as identity
_act_check = one_of(*ACTIVATIONS)


# ------------------------------------------------------------------ layout
def _layout(op, lod, reverse):
    if lod.inputs[0] and len(lod.inputs[0]) != 1:
        raise ExecutionError(
            f"op {op}: Input has a {len(lod.inputs[0])}-level LoD; the fused RNN ops take "
            "one level (one sequence per LoD entry)")
    return seq_batch(lod.offsets(0), reverse)


def _sorted_state(op, xp, sb, slot, value, d):
    """H0/C0 [num_seqs, D] in the sorted order of frame 0 (None stays None)."""
    if value is None:
        return None
    if value.ndim != 2 or value.shape[0] != sb.num_seqs or value.shape[1] != d:
        raise ExecutionError(
            f"op {op}: {slot} has shape {list(value.shape)}, expected [{sb.num_seqs}, {d}]: "
            f"one row per sequence of Input ({sb.num_seqs} sequences), hidden size {d}")
    return sb.sorted_rows(xp, value)


def _prev_rows(xp, sb, seq_values, first):
    """Batch layout of every row's previous step (h_{t-1} or c_{t-1}): frame 0 gets the
    sorted initial state ``first`` or zeros, later frames the sequence's previous row."""
    out = xp.empty_like(seq_values)
    n0 = int(sb.batch_sizes[0]) if sb.num_frames else 0
    out[:n0] = 0 if first is None else first
    step_back = sb.rows[n0:] + (1 if sb.reverse else -1)
    out[n0:] = seq_values[step_back if xp is np else xp.asarray(step_back)]
    return out


def _state_grad(xp, sb, frame0_grad, state):
    """Gradient of H0/C0 in LoD order from frame 0's rows (sequences of length 0, absent
    from frame 0, get zeros)."""
    full = xp.zeros_like(state)
    if frame0_grad is not None:
        full[:frame0_grad.shape[0]] = frame0_grad
    return sb.unsorted_rows(xp, full)


def _zeros_or_batch(xp, sb, grad, like):
    return sb.to_batch(xp, grad) if grad is not None else xp.zeros_like(like)


# -------------------------------------------------------------------- lstm
def _lstm(xp, attrs, lod, x, h0, c0, w, bias):
    d, peep = w.shape[0], attrs["use_peepholes"]
    sb = _layout("lstm", lod, attrs["is_reverse"])
    gate = ACTIVATIONS[attrs["gate_activation"]][0]
    cand = ACTIVATIONS[attrs["candidate_activation"]][0]
    cell_fn = ACTIVATIONS[attrs["cell_activation"]][0]
    h_prev = _sorted_state("lstm", xp, sb, "H0", h0, d)
    c_prev = _sorted_state("lstm", xp, sb, "C0", c0, d)
    gates = sb.to_batch(xp, x)  # a fresh copy: the pre-activations become BatchGate
    gates += bias[0, :4 * d]
    g4 = gates.reshape(-1, 4, d)
    if peep:
        check_if, check_o = bias[0, 4 * d:6 * d].reshape(2, d), bias[0, 6 * d:7 * d]
    total = gates.shape[0]
    cell = xp.empty((total, d), dtype=gates.dtype)
    cell_act = xp.empty_like(cell)
    hidden = xp.empty_like(cell)
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames):
        s, e = starts[t], starts[t + 1]
        n, g, gv = e - s, gates[s:e], g4[s:e]
        if h_prev is not None:
            g += h_prev[:n] @ w
        if c_prev is not None:
            c_prev = c_prev[:n]
            if peep:
                gv[:, 1:3] += c_prev[:, None, :] * check_if
        ifo = gv[:, 1:3] if peep else gv[:, 1:]
        gate(xp, ifo, ifo)
        cand(xp, gv[:, 0], gv[:, 0])
        c = cell[s:e]
        xp.multiply(gv[:, 0], gv[:, 1], out=c)
        if c_prev is not None:
            c += c_prev * gv[:, 2]
        if peep:
            gv[:, 3] += c * check_o
            gate(xp, gv[:, 3], gv[:, 3])
        cell_fn(xp, c, cell_act[s:e])
        h_prev, c_prev = xp.multiply(gv[:, 3], cell_act[s:e], out=hidden[s:e]), c
    return (sb.to_sequence(xp, hidden), sb.to_sequence(xp, cell) if wanted(attrs, 1) else None,
            gates, cell_act)


def _lstm_grad(xp, attrs, lod, x, h0, c0, w, bias, hidden, cell, batch_gate, cell_act,
               d_hidden, d_cell):
    d, peep = w.shape[0], attrs["use_peepholes"]
    sb = _layout("lstm_grad", lod, attrs["is_reverse"])
    d_gate = ACTIVATIONS[attrs["gate_activation"]][1]
    d_cand = ACTIVATIONS[attrs["candidate_activation"]][1]
    d_cell_act = ACTIVATIONS[attrs["cell_activation"]][1]
    g4 = batch_gate.reshape(-1, 4, d)
    c_prev = _prev_rows(xp, sb, cell, _sorted_state("lstm_grad", xp, sb, "C0", c0, d))
    # Whole-batch factors, so that per frame: dz_o = dh*f_o, dc = dC + dh*f_c,
    # [dz_c~, dz_i, dz_f] = dc*f_cif, dc_{t-1} = dc*f_prev.
    gate_d = d_gate(xp, g4[:, 1:])
    f_cif = xp.empty((g4.shape[0], 3, d), dtype=batch_gate.dtype)
    xp.multiply(g4[:, 1], d_cand(xp, g4[:, 0]), out=f_cif[:, 0])
    xp.multiply(g4[:, 0], gate_d[:, 0], out=f_cif[:, 1])
    xp.multiply(c_prev, gate_d[:, 1], out=f_cif[:, 2])
    f_o = cell_act * gate_d[:, 2]
    f_c = g4[:, 3] * d_cell_act(xp, cell_act)
    f_prev = g4[:, 2].copy()
    if peep:
        check_i, check_f, check_o = (bias[0, k * d:(k + 1) * d] for k in (4, 5, 6))
        f_c += f_o * check_o
        f_prev += f_cif[:, 1] * check_i + f_cif[:, 2] * check_f
    dh_b = _zeros_or_batch(xp, sb, d_hidden, cell)
    dc_b = _zeros_or_batch(xp, sb, d_cell, cell)
    dz = xp.empty_like(batch_gate)
    dz4 = dz.reshape(-1, 4, d)
    w_t = w.T
    dh0 = dc0 = None
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames - 1, -1, -1):
        s, e = starts[t], starts[t + 1]
        n, dh, dc = e - s, dh_b[s:e], dc_b[s:e]
        xp.multiply(dh, f_o[s:e], out=dz4[s:e, 3])
        dc += dh * f_c[s:e]
        xp.multiply(dc[:, None, :], f_cif[s:e], out=dz4[s:e, :3])
        if t:
            p = starts[t - 1]
            dc_b[p:p + n] += dc * f_prev[s:e]
            dh_b[p:p + n] += dz[s:e] @ w_t
        else:
            dc0 = dc * f_prev[s:e] if c0 is not None else None
            dh0 = dz[s:e] @ w_t if h0 is not None and wanted(attrs, 1) else None
    dw = db = None
    if wanted(attrs, 3):
        h_prev = _prev_rows(xp, sb, hidden, _sorted_state("lstm_grad", xp, sb, "H0", h0, d))
        dw = h_prev.T @ dz
    if wanted(attrs, 4):
        db = xp.empty_like(bias)
        db[0, :4 * d] = dz.sum(axis=0)
        if peep:
            db[0, 4 * d:6 * d] = (dz4[:, 1:3] * c_prev[:, None, :]).sum(axis=0).reshape(-1)
            db[0, 6 * d:] = (dz4[:, 3] * sb.to_batch(xp, cell)).sum(axis=0)
    return (sb.to_sequence(xp, dz) if wanted(attrs, 0) else None,
            _state_grad(xp, sb, dh0, h0) if h0 is not None and wanted(attrs, 1) else None,
            _state_grad(xp, sb, dc0, c0) if c0 is not None and wanted(attrs, 2) else None, dw, db)


# --------------------------------------------------------------------- gru
def _gru_weights(w):
    """(W_ur [D, 2D], W_c [D, D]) split by memory as Paddle does (module docstring)."""
    d = w.shape[0]
    flat = w.reshape(-1)
    return flat[:2 * d * d].reshape(d, 2 * d), flat[2 * d * d:].reshape(d, d)


def _gru(xp, attrs, lod, x, h0, w, bias):
    d, origin = w.shape[0], attrs["origin_mode"]
    sb = _layout("gru", lod, attrs["is_reverse"])
    gate = ACTIVATIONS[attrs["gate_activation"]][0]
    act = ACTIVATIONS[attrs["activation"]][0]
    w_ur, w_c = _gru_weights(w)
    h_prev = _sorted_state("gru", xp, sb, "H0", h0, d)
    gates = sb.to_batch(xp, x)
    if bias is not None:
        gates += bias[0]
    reset_prev = xp.empty((gates.shape[0], d), dtype=gates.dtype)
    hidden = xp.empty_like(reset_prev)
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames):
        s, e = starts[t], starts[t + 1]
        n, g, rp, h = e - s, gates[s:e], reset_prev[s:e], hidden[s:e]
        u, r, c, ur = g[:, :d], g[:, d:2 * d], g[:, 2 * d:], g[:, :2 * d]
        if h_prev is not None:
            hp = h_prev[:n]
            ur += hp @ w_ur
            gate(xp, ur, ur)
            xp.multiply(r, hp, out=rp)
            c += rp @ w_c
            act(xp, c, c)
            # h = hp + u*(c - hp)  or, origin_mode, h = c + u*(hp - c)
            if origin:
                xp.subtract(hp, c, out=h)
            else:
                xp.subtract(c, hp, out=h)
            h *= u
            h += c if origin else hp
        else:  # h_{-1} = 0: no recurrent matmuls
            gate(xp, ur, ur)
            rp[...] = 0
            act(xp, c, c)
            if origin:
                xp.subtract(1.0, u, out=h)
                h *= c
            else:
                xp.multiply(u, c, out=h)
        h_prev = h
    return gates, reset_prev, hidden, sb.to_sequence(xp, hidden)


def _gru_grad(xp, attrs, lod, x, h0, w, bias, batch_gate, reset_prev, batch_hidden, hidden,
              d_hidden):
    d, origin = w.shape[0], attrs["origin_mode"]
    sb = _layout("gru_grad", lod, attrs["is_reverse"])
    d_gate = ACTIVATIONS[attrs["gate_activation"]][1]
    d_act = ACTIVATIONS[attrs["activation"]][1]
    w_ur, w_c = _gru_weights(w)
    g3 = batch_gate.reshape(-1, 3, d)
    u, r, c = g3[:, 0], g3[:, 1], g3[:, 2]
    h_prev = _prev_rows(xp, sb, hidden, _sorted_state("gru_grad", xp, sb, "H0", h0, d))
    # Whole-batch factors: dz_u = dh*f_u, dz_c = dh*f_c, dz_r = (dz_c W_c^T)*f_r,
    # dh_{t-1} = dh*f_h + (dz_c W_c^T)*r + dz_ur W_ur^T.
    gate_d = d_gate(xp, g3[:, :2])
    f_u = (h_prev - c) if origin else (c - h_prev)
    f_u *= gate_d[:, 0]
    f_c = d_act(xp, c)
    f_c *= (1.0 - u) if origin else u
    f_h = u if origin else 1.0 - u
    f_r = h_prev * gate_d[:, 1]
    dh_b = _zeros_or_batch(xp, sb, d_hidden, reset_prev)
    dz = xp.empty_like(batch_gate)
    dz3 = dz.reshape(-1, 3, d)
    w_ur_t, w_c_t = w_ur.T, w_c.T
    dh0 = None
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames - 1, -1, -1):
        s, e = starts[t], starts[t + 1]
        n, dh = e - s, dh_b[s:e]
        xp.multiply(dh, f_u[s:e], out=dz3[s:e, 0])
        xp.multiply(dh, f_c[s:e], out=dz3[s:e, 2])
        d_rp = dz3[s:e, 2] @ w_c_t
        xp.multiply(d_rp, f_r[s:e], out=dz3[s:e, 1])
        d_rp *= r[s:e]
        d_rp += dh * f_h[s:e]
        d_rp += dz[s:e, :2 * d] @ w_ur_t
        if t:
            p = starts[t - 1]
            dh_b[p:p + n] += d_rp
        else:
            dh0 = d_rp
    dw = None
    if wanted(attrs, 2):
        dw = xp.empty((3 * d * d,), dtype=dz.dtype)
        dw[:2 * d * d] = (h_prev.T @ dz[:, :2 * d]).reshape(-1)
        dw[2 * d * d:] = (reset_prev.T @ dz[:, 2 * d:]).reshape(-1)
        dw = dw.reshape(d, 3 * d)
    db = dz.sum(axis=0, keepdims=True) if bias is not None and wanted(attrs, 3) else None
    return (sb.to_sequence(xp, dz) if wanted(attrs, 0) else None,
            _state_grad(xp, sb, dh0, h0) if h0 is not None and wanted(attrs, 1) else None, dw, db)


# ------------------------------------------------------------ shape checks
def _infer_rnn(ctx, gates):
    """Shared checks: Input [T, kD], Weight [D, kD], H0/C0 [N, D], Bias [1, kD] or [1, 7D]."""
    op, x, w = ctx.op_type, ctx.input("Input"), ctx.input("Weight")
    if len(w.shape) != 2 or (w.shape[0] > 0 and w.shape[1] > 0 and w.shape[1] != gates * w.shape[0]):
        ctx.fail(f"Weight {list(w.shape)} must be [D, {gates}*D] (D = hidden size)", slot="Weight")
    d = w.shape[0]
    if len(x.shape) != 2:
        ctx.fail(f"Input {list(x.shape)} must be 2-D [T, {gates}*D]", slot="Input")
    if x.shape[1] > 0 and w.shape[1] > 0 and x.shape[1] != w.shape[1]:
        ctx.fail(f"Input {list(x.shape)} must have {gates}*D = {w.shape[1]} columns to match "
                 f"Weight {list(w.shape)}", slot="Input")
    for slot in ("H0", "C0"):
        s = ctx.input(slot)
        if s is not None and (len(s.shape) != 2 or d > 0 and s.shape[1] not in (-1, d)):
            ctx.fail(f"{slot} {list(s.shape)} must be [num_sequences, {d}] to match Weight "
                     f"{list(w.shape)}", slot=slot)
    b = ctx.input("Bias")
    width = 7 * d if gates == 4 and ctx.attr("use_peepholes") else gates * d
    if b is not None and (len(b.shape) != 2 or b.shape[0] not in (-1, 1)
                          or d > 0 and b.shape[1] not in (-1, width)):
        peep = " (use_peepholes adds 3*D peephole weights)" if gates == 4 else ""
        ctx.fail(f"Bias {list(b.shape)} must be [1, {width}]{peep} for Weight {list(w.shape)}",
                 slot="Bias")
    return x, [x.shape[0], d]


def _infer_lstm(ctx):
    x, shape = _infer_rnn(ctx, 4)
    if ctx.input("Bias") is None:
        ctx.fail("Bias is required ([1, 4D], or [1, 7D] with use_peepholes)", slot="Bias")
    ctx.set_output("Hidden", shape, like=x)
    ctx.set_output("Cell", shape, like=x)
    ctx.set_output("BatchGate", x.shape, like=x, lod_level=0)
    ctx.set_output("BatchCellPreAct", shape, like=x, lod_level=0)


def _infer_gru(ctx):
    x, shape = _infer_rnn(ctx, 3)
    ctx.set_output("BatchGate", x.shape, like=x, lod_level=0)
    ctx.set_output("BatchResetHiddenPrev", shape, like=x, lod_level=0)
    ctx.set_output("BatchHidden", shape, like=x, lod_level=0)
    ctx.set_output("Hidden", shape, like=x)


def _act_attr(name, default, what):
    return Attr(name, AttrType.STRING, default, _act_check, doc=f"{what}: sigmoid, tanh, relu, identity")


_COMMON = [Attr("is_reverse", AttrType.BOOLEAN, False, doc="walk each sequence from its end"),
           Attr("is_test", AttrType.BOOLEAN, False)]

register(
    "lstm",
    inputs=[Slot("Input", doc="[T, 4D] LoD: x-projections of the c~, i, f, o gates"),
            Slot("H0", dispensable=True, doc="[N, D] initial hidden, one row per sequence"),
            Slot("C0", dispensable=True, doc="[N, D] initial cell, one row per sequence"),
            Slot("Weight", doc="[D, 4D] recurrent weights, blocks c~, i, f, o"),
            Slot("Bias", doc="[1, 4D] gate biases, + [w_ic, w_fc, w_oc] = [1, 7D] with peepholes")],
    outputs=[Slot("Hidden", doc="[T, D] LoD"), Slot("Cell", doc="[T, D] LoD"),
             Slot("BatchGate", intermediate=True, doc="activated gates, batch layout"),
             Slot("BatchCellPreAct", intermediate=True, doc="cell_activation(c), batch layout")],
    attrs=[Attr("use_peepholes", AttrType.BOOLEAN, True, doc="Bias carries w_ic, w_fc, w_oc"),
           _COMMON[0], _COMMON[1],
           _act_attr("gate_activation", "sigmoid", "i, f, o gates"),
           _act_attr("cell_activation", "tanh", "applied to c before h = o * act(c)"),
           _act_attr("candidate_activation", "tanh", "candidate c~")],
    infer_shape=_infer_lstm, kernel=_lstm, lod=True,
    share_lod=(("Input", "Hidden"), ("Input", "Cell")),
    grad=GradSpec(_lstm_grad, inputs=("Input", "H0", "C0", "Weight", "Bias"),
                  outputs=("Hidden", "Cell", "BatchGate", "BatchCellPreAct"),
                  out_grads=("Hidden", "Cell"),
                  in_grads=("Input", "H0", "C0", "Weight", "Bias")),
    doc="fused LSTM over LoD sequences (sequence-to-batch, no padding)", category="rnn")

register(
    "gru",
    inputs=[Slot("Input", doc="[T, 3D] LoD: x-projections of the u, r, c blocks"),
            Slot("H0", dispensable=True, doc="[N, D] initial hidden, one row per sequence"),
            Slot("Weight", doc="[D, 3D]: first 2*D*D values W_ur [D, 2D], last D*D W_c [D, D]"),
            Slot("Bias", dispensable=True, doc="[1, 3D]")],
    outputs=[Slot("BatchGate", intermediate=True, doc="activated u, r, c, batch layout"),
             Slot("BatchResetHiddenPrev", intermediate=True, doc="r * h_{t-1}, batch layout"),
             Slot("BatchHidden", intermediate=True, doc="h, batch layout"),
             Slot("Hidden", doc="[T, D] LoD")],
    attrs=[_act_attr("activation", "tanh", "candidate c"),
           _act_attr("gate_activation", "sigmoid", "u, r gates"), _COMMON[0],
           Attr("origin_mode", AttrType.BOOLEAN, False,
                doc="h = u*h_prev + (1-u)*c (Cho et al.) instead of (1-u)*h_prev + u*c"),
           _COMMON[1]],
    infer_shape=_infer_gru, kernel=_gru, lod=True, share_lod=(("Input", "Hidden"),),
    grad=GradSpec(_gru_grad, inputs=("Input", "H0", "Weight", "Bias"),
                  outputs=("BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"),
                  out_grads=("Hidden",), in_grads=("Input", "H0", "Weight", "Bias")),
    doc="fused GRU over LoD sequences (sequence-to-batch, no padding)", category="rnn")
