"""Paddle's fused recurrent ops over LoD sequences: ``lstm``, ``gru`` and their grads.

The x-projection is done outside (an ``fc`` to [T, 4D] / [T, 3D]); these ops run the
recurrence in the sequence-to-batch layout (``kernels/seqbatch.py``): per frame one matmul
of the alive prefix ``h[:n_t] @ W`` and fused element-wise gate math, no padding.

Layouts, checked numerically against Paddle 3.3.1's kernels (legacy static mode):

* lstm: the 4 gate blocks of Input, Weight [D, 4D] and Bias[:, :4D] are, in order,
  candidate c~, input i, forget f, output o. With ``use_peepholes`` Bias is [1, 7D] and
  Bias[:, 4D:7D] are the element-wise peephole weights w_ic, w_fc, w_oc::

      i = gate(z_i + w_ic * c_{t-1})   f = gate(z_f + w_fc * c_{t-1})   c~ = cand(z_c)
      c_t = f * c_{t-1} + i * c~       o = gate(z_o + w_oc * c_t)       h_t = o * cell(c_t)
      where z = Input_t + h_{t-1} @ Weight + Bias[:, :4D]

  BatchGate holds the activated [c~, i, f, o] and BatchCellPreAct cell(c_t) (after the
  activation, despite the name), both in batch layout. Paddle's lstm_grad ignores a
  gradient on Cell; ours takes it (a dispensable Cell@GRAD input).
* gru: the 3 blocks of Input and Bias [1, 3D] are update u, reset r, candidate c. Weight
  [D, 3D] is split by *memory*, not by columns: its first 2*D*D values are W_ur [D, 2D],
  the last D*D are W_c [D, D]::

      [u, r] = gate(x_ur + b_ur + h_{t-1} @ W_ur)    c = act(x_c + b_c + (r * h_{t-1}) @ W_c)
      h_t = (1 - u) * h_{t-1} + u * c   (origin_mode False, Paddle's default)
      h_t = u * h_{t-1} + (1 - u) * c   (origin_mode True, as in Cho et al.)

  BatchGate holds activated [u, r, c], BatchResetHiddenPrev r * h_{t-1}, BatchHidden h.
* H0 / C0 are [num_sequences, D], one row per sequence in LoD order; absent means zeros.
"""
import threading

import numpy as np

from ..errors import ExecutionError
from ..ir.registry import Attr, AttrType, GradSpec, Slot, one_of, register, wanted
from .seqbatch import seq_batch


_SCRATCH = threading.local()
_SCRATCH_LIMIT = 16 << 20  # bytes; a larger temporary is a plain allocation, not kept


def _scratch(xp, name, shape, dtype):
    """A per-thread reusable buffer for a temporary that never leaves the kernel. A fresh
    large array costs a page fault per 4 KiB on every call (freed memory goes back to the
    OS), which for these kernels costs more than the arithmetic."""
    size, dtype = int(np.prod(shape)), np.dtype(dtype)
    if size * dtype.itemsize > _SCRATCH_LIMIT:
        return xp.empty(shape, dtype)
    buffers = _SCRATCH.__dict__.setdefault("buffers", {})
    key = (name, xp.__name__, dtype.str)
    if key not in buffers or buffers[key].size < size:
        buffers[key] = xp.empty(max(size, 1), dtype)
    return buffers[key][:size].reshape(shape)


# ------------------------------------------------------------- activations
# (fn, deriv): fn(xp, src, out) writes act(src) into out (out may be src); deriv(xp, y, out)
# writes act' in terms of the activated value y into out. Neither makes temporaries.
def _half_sigmoid(xp, src, out):
    """sigmoid(2 * src) = (tanh(src) + 1) / 2, without exp overflow warnings; with src
    None, ``out`` already holds tanh(src)."""
    if src is not None:
        xp.tanh(src, out=out)
    xp.add(xp.multiply(out, 0.5, out=out), 0.5, out=out)


# Paddle's lstm/gru kernels take "sigmoid" as its clipped form: the input is clipped to
# [SIGMOID_THRESHOLD_MIN, MAX] = [-40, 13] first (funcs/detail/activation_functions.h), so
# a gate never exceeds sigmoid(13) = 1 - 2.3e-6. Its derivative stays y * (1 - y) of the
# clipped y, as Paddle's backward. (Its "tanh" clips -2a at 40, which changes no float64
# result: tanh(-20) already rounds to -1.) The fused ``rnn`` op does not clip.
SIGMOID_MIN, SIGMOID_MAX = -40.0, 13.0


def _half_sigmoid_clipped(xp, src, out):
    """``_half_sigmoid`` of a halved input ``src`` (z / 2), z clipped to Paddle's range."""
    xp.clip(src, SIGMOID_MIN / 2, SIGMOID_MAX / 2, out=out)
    _half_sigmoid(xp, None, xp.tanh(out, out=out))


def _identity(xp, src, out):
    if out is not src:
        out[...] = src


ACTIVATIONS = {  # Paddle's names; "" is identity too
    "sigmoid": (lambda xp, src, out: _half_sigmoid_clipped(xp, xp.multiply(src, 0.5, out=out),
                                                           out),
                lambda xp, y, out: xp.multiply(xp.subtract(1.0, y, out=out), y, out=out)),
    "tanh": (lambda xp, src, out: xp.tanh(src, out=out),
             lambda xp, y, out: xp.subtract(1.0, xp.multiply(y, y, out=out), out=out)),
    "relu": (lambda xp, src, out: xp.maximum(src, 0, out=out),
             lambda xp, y, out: xp.greater(y, 0, out=out)),
    "identity": (_identity, lambda xp, y, out: xp.copyto(out, 1)),
    "": (_identity, lambda xp, y, out: xp.copyto(out, 1))}


# ------------------------------------------------------------------ layout
def _layout(op, lod, reverse):
    if lod.inputs[0] and len(lod.inputs[0]) != 1:
        raise ExecutionError(f"op {op}: Input has a {len(lod.inputs[0])}-level LoD; the fused "
                             "RNN ops take one level (one sequence per LoD entry)")
    return seq_batch(lod.offsets(0), reverse)


def _sorted_state(op, xp, sb, slot, value, d, like):
    """H0/C0 [num_seqs, D] in the sorted order of frame 0; zeros when absent."""
    if value is None:
        return xp.zeros((sb.num_seqs, d), dtype=like.dtype)
    if value.ndim != 2 or value.shape[0] != sb.num_seqs or value.shape[1] != d:
        raise ExecutionError(
            f"op {op}: {slot} has shape {list(value.shape)}, expected [{sb.num_seqs}, {d}]: "
            f"one row per sequence of Input ({sb.num_seqs} sequences), hidden size {d}")
    return sb.sorted_rows(xp, value)


def _prev_rows(xp, sb, seq_values, first, name):
    """Batch layout of every row's previous step (h_{t-1} or c_{t-1}): frame 0 gets the
    sorted initial state ``first`` or zeros, later frames the sequence's previous row."""
    out = _scratch(xp, name, seq_values.shape, seq_values.dtype)
    n0 = int(sb.batch_sizes[0]) if sb.num_frames else 0
    out[:n0] = first[:n0]
    step_back = sb.rows[n0:] + (1 if sb.reverse else -1)
    _take_rows(xp, seq_values, step_back if xp is np else xp.asarray(step_back), out[n0:])
    return out


def _transposed(xp, w, name):
    """W^T, contiguous: OpenBLAS runs a small-m GEMM against the view ``w.T`` 1.5-3x slower."""
    out = _scratch(xp, name, w.shape[::-1], w.dtype)
    out[...] = w.T
    return out


def _state_grad(xp, sb, frame0_grad, state):
    """Gradient of H0/C0 in LoD order from frame 0's rows (zeros for empty sequences)."""
    full = xp.zeros_like(state)
    if frame0_grad is not None:
        full[:frame0_grad.shape[0]] = frame0_grad
    return sb.unsorted_rows(xp, full)


def _batch_grad(xp, sb, grad, like, name):
    """An output gradient in batch layout, as a scratch accumulator (zeros when absent)."""
    if grad is None:
        return xp.zeros_like(like)
    return _take_rows(xp, grad, sb.index(xp), _scratch(xp, name, like.shape, like.dtype))


def _take_rows(xp, values, rows, out):
    """``values[rows]`` into ``out``. numpy's default mode="raise" gathers into a
    temporary and copies it over when given an ``out`` (3x the time for [1,353, 128]);
    the rows here are all in range, so "clip" gathers straight into ``out``."""
    if xp is np:
        return np.take(values, rows, axis=0, out=out, mode="clip")
    return xp.take(values, rows, axis=0, out=out)


# -------------------------------------------------------------------- lstm
def _lstm(xp, attrs, lod, x, h0, c0, w, bias):
    d, peep = w.shape[0], attrs["use_peepholes"]
    sb = _layout("lstm", lod, attrs["is_reverse"])
    gate, cand, cell_fn = (ACTIVATIONS[attrs[k]][0] for k in (
        "gate_activation", "candidate_activation", "cell_activation"))
    h_prev = _sorted_state("lstm", xp, sb, "H0", h0, d, x)
    c_prev = _sorted_state("lstm", xp, sb, "C0", c0, d, x)
    gates = sb.to_batch(xp, x)  # a fresh copy: the pre-activations become BatchGate
    gates += bias[0, :4 * d]
    g4 = gates.reshape(-1, 4, d)
    check_if, check_o = bias[0, 4 * d:6 * d].reshape(-1, d), bias[0, 6 * d:7 * d]
    joint = False
    if attrs["gate_activation"] == "sigmoid":
        # sigmoid(z) = (tanh(z / 2) + 1) / 2: the gate columns of every term of z are halved
        # once per call, so a gate costs a tanh and two scalar ops, and with a tanh
        # candidate and no peepholes one tanh covers the frame's four blocks.
        g4[:, 1:] *= 0.5
        w = xp.multiply(w.reshape(d, 4, d), xp.asarray([1.0, 0.5, 0.5, 0.5], w.dtype)[:, None],
                        out=_scratch(xp, "lstm.w_half", (d, 4, d), w.dtype)).reshape(d, 4 * d)
        check_if, check_o = check_if * 0.5, check_o * 0.5
        gate, joint = _half_sigmoid_clipped, attrs["candidate_activation"] == "tanh" and not peep
    cell_act = xp.empty((gates.shape[0], d), dtype=gates.dtype)
    cell, hidden = (_scratch(xp, name, cell_act.shape, cell_act.dtype)
                    for name in ("lstm.cell", "lstm.hidden"))
    # Frame products go to reused buffers (a fresh [n, 4D] per frame is fresh pages).
    tmp, tmp_d = (_scratch(xp, f"lstm.tmp{k}", (len(c_prev), k * d), x.dtype) for k in (4, 1))
    tmp4 = tmp.reshape(-1, 4, d)
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames):
        s, e = starts[t], starts[t + 1]
        n, gv, c, ca = e - s, g4[s:e], cell[s:e], cell_act[s:e]
        gates[s:e] += xp.matmul(h_prev[:n], w, out=tmp[:n])
        c_prev = c_prev[:n]
        if peep:
            gv[:, 1:3] += xp.multiply(c_prev[:, None, :], check_if, out=tmp4[:n, :2])
        if joint:  # the gate blocks (halved) clipped as _half_sigmoid_clipped does
            xp.clip(gv[:, 1:], SIGMOID_MIN / 2, SIGMOID_MAX / 2, out=gv[:, 1:])
            xp.tanh(gv, out=gv)
            _half_sigmoid(xp, None, gv[:, 1:])
        else:
            ifo = gv[:, 1:3] if peep else gv[:, 1:]  # o waits for c_t with peepholes
            gate(xp, ifo, ifo)
            cand(xp, gv[:, 0], gv[:, 0])
        xp.multiply(gv[:, 0], gv[:, 1], out=c)
        c += xp.multiply(c_prev, gv[:, 2], out=tmp_d[:n])
        if peep:
            gv[:, 3] += xp.multiply(c, check_o, out=tmp_d[:n])
            gate(xp, gv[:, 3], gv[:, 3])
        cell_fn(xp, c, ca)
        h_prev, c_prev = xp.multiply(gv[:, 3], ca, out=hidden[s:e]), c
    return (sb.to_sequence(xp, hidden), sb.to_sequence(xp, cell) if wanted(attrs, 1) else None,
            gates, cell_act)


def _lstm_grad(xp, attrs, lod, x, h0, c0, w, bias, hidden, cell, batch_gate, cell_act,
               d_hidden, d_cell):
    d, peep = w.shape[0], attrs["use_peepholes"]
    sb = _layout("lstm_grad", lod, attrs["is_reverse"])
    d_gate = ACTIVATIONS[attrs["gate_activation"]][1]
    g4 = batch_gate.reshape(-1, 4, d)
    c0s = _sorted_state("lstm_grad", xp, sb, "C0", c0, d, cell)
    c_prev = _prev_rows(xp, sb, cell, c0s, "c_prev")
    dz = _scratch(xp, "lstm.dz", batch_gate.shape, batch_gate.dtype)
    dz4 = dz.reshape(-1, 4, d)
    # Whole-batch factors, so that a frame needs: dz_o = dh*f_o, dc = dC + dh*f_c,
    # [dz_c~, dz_i, dz_f] = dc*f_cif, dc_{t-1} = dc*f_prev (dz is scratch until the loop).
    f_cif = _scratch(xp, "lstm.f_cif", (g4.shape[0], 3, d), batch_gate.dtype)
    ACTIVATIONS[attrs["candidate_activation"]][1](xp, g4[:, 0], f_cif[:, 0])
    f_cif[:, 0] *= g4[:, 1]
    d_gate(xp, g4[:, 1:3], f_cif[:, 1:])
    f_cif[:, 1] *= g4[:, 0]
    f_cif[:, 2] *= c_prev
    f_o, f_c, f_prev = (_scratch(xp, "lstm." + k, cell_act.shape, cell_act.dtype)
                        for k in ("f_o", "f_c", "f_prev"))
    d_gate(xp, g4[:, 3], f_o)
    f_o *= cell_act
    ACTIVATIONS[attrs["cell_activation"]][1](xp, cell_act, f_c)
    f_c *= g4[:, 3]
    f_prev[...] = g4[:, 2]
    if peep:
        check_i, check_f, check_o = (bias[0, k * d:(k + 1) * d] for k in (4, 5, 6))
        scratch = dz4[:, 0]
        f_c += xp.multiply(f_o, check_o, out=scratch)
        f_prev += xp.multiply(f_cif[:, 1], check_i, out=scratch)
        f_prev += xp.multiply(f_cif[:, 2], check_f, out=scratch)
    dh_b = _batch_grad(xp, sb, d_hidden, cell_act, "dh")
    dc_b = _batch_grad(xp, sb, d_cell, cell_act, "dc")
    w_t, tmp = _transposed(xp, w, "lstm.w_t"), _scratch(xp, "lstm.tmp1", (len(c0s), d), w.dtype)
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames - 1, -1, -1):
        s, e = starts[t], starts[t + 1]
        n, dh, dc = e - s, dh_b[s:e], dc_b[s:e]
        xp.multiply(dh, f_o[s:e], out=dz4[s:e, 3])
        dc += xp.multiply(dh, f_c[s:e], out=tmp[:n])
        xp.multiply(dc[:, None, :], f_cif[s:e], out=dz4[s:e, :3])
        if t:
            p = starts[t - 1]
            dc_b[p:p + n] += xp.multiply(dc, f_prev[s:e], out=tmp[:n])
            dh_b[p:p + n] += xp.matmul(dz[s:e], w_t, out=tmp[:n])
    n0 = starts[1] if sb.num_frames else 0  # frame 0 passes its gradient to H0 and C0
    dh0 = dz[:n0] @ w_t if h0 is not None and wanted(attrs, 1) else None
    dc0 = dc_b[:n0] * f_prev[:n0] if c0 is not None and wanted(attrs, 2) else None
    dw = db = None
    if wanted(attrs, 3):
        h_prev = _prev_rows(xp, sb, hidden, _sorted_state("lstm_grad", xp, sb, "H0", h0, d, cell),
                            "h_prev")
        dw = h_prev.T @ dz
    if wanted(attrs, 4):
        db = xp.empty_like(bias)
        db[0, :4 * d] = dz.sum(axis=0)
        if peep:  # d w_ic = sum dz_i * c_{t-1}, d w_fc likewise, d w_oc = sum dz_o * c_t
            db[0, 4 * d:6 * d] = xp.einsum("tkd,td->kd", dz4[:, 1:3], c_prev).reshape(-1)
            cell_b = xp.take(cell, sb.index(xp), axis=0, out=c_prev)  # c_prev is done
            db[0, 6 * d:] = xp.einsum("td,td->d", dz4[:, 3], cell_b)
    return (sb.to_sequence(xp, dz) if wanted(attrs, 0) else None,
            None if dh0 is None else _state_grad(xp, sb, dh0, h0),
            None if dc0 is None else _state_grad(xp, sb, dc0, c0), dw, db)


# --------------------------------------------------------------------- gru
def _gru_weights(w):
    """(W_ur [D, 2D], W_c [D, D]) split by memory as Paddle does (module docstring)."""
    d, flat = w.shape[0], w.reshape(-1)
    return flat[:2 * d * d].reshape(d, 2 * d), flat[2 * d * d:].reshape(d, d)


def _gru(xp, attrs, lod, x, h0, w, bias):
    d, origin = w.shape[0], attrs["origin_mode"]
    sb = _layout("gru", lod, attrs["is_reverse"])
    gate, act = (ACTIVATIONS[attrs[k]][0] for k in ("gate_activation", "activation"))
    w_ur, w_c = _gru_weights(w)
    h_prev = _sorted_state("gru", xp, sb, "H0", h0, d, x)
    gates = sb.to_batch(xp, x)
    if bias is not None:
        gates += bias[0]
    reset_prev, hidden = (xp.empty((gates.shape[0], d), dtype=gates.dtype) for _ in range(2))
    tmp, tmp_d = (_scratch(xp, f"gru.tmp{k}", (len(h_prev), k * d), x.dtype) for k in (2, 1))
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames):
        s, e = starts[t], starts[t + 1]
        n, g, rp, h = e - s, gates[s:e], reset_prev[s:e], hidden[s:e]
        u, r, c, ur, hp = g[:, :d], g[:, d:2 * d], g[:, 2 * d:], g[:, :2 * d], h_prev[:n]
        ur += xp.matmul(hp, w_ur, out=tmp[:n])
        gate(xp, ur, ur)
        xp.multiply(r, hp, out=rp)
        c += xp.matmul(rp, w_c, out=tmp_d[:n])
        act(xp, c, c)
        a, b = (c, hp) if origin else (hp, c)  # h = a + u * (b - a)
        xp.subtract(b, a, out=h)
        h *= u
        h_prev = xp.add(h, a, out=h)
    return gates, reset_prev, hidden, sb.to_sequence(xp, hidden)


def _gru_grad(xp, attrs, lod, x, h0, w, bias, batch_gate, reset_prev, batch_hidden, hidden,
              d_hidden):
    d, origin = w.shape[0], attrs["origin_mode"]
    sb = _layout("gru_grad", lod, attrs["is_reverse"])
    d_gate = ACTIVATIONS[attrs["gate_activation"]][1]
    w_ur, w_c = _gru_weights(w)
    g3 = batch_gate.reshape(-1, 3, d)
    u, r, c = g3[:, 0], g3[:, 1], g3[:, 2]
    h0s = _sorted_state("gru_grad", xp, sb, "H0", h0, d, hidden)
    h_prev = _prev_rows(xp, sb, hidden, h0s, "h_prev")
    dz = _scratch(xp, "gru.dz", batch_gate.shape, batch_gate.dtype)
    dz3 = dz.reshape(-1, 3, d)
    # Whole-batch factors, so that a frame needs: dz_u = dh*f_u, dz_c = dh*f_c,
    # dz_r = (dz_c W_c^T)*f_r, dh_{t-1} = dh*f_h + (dz_c W_c^T)*r + dz_ur W_ur^T.
    f_u, f_c, f_r, f_h = (_scratch(xp, "gru." + k, reset_prev.shape, reset_prev.dtype)
                          for k in ("f_u", "f_c", "f_r", "f_h"))
    scratch = dz3[:, 0]  # dz is not written before the loop
    a, b = (c, h_prev) if origin else (h_prev, c)  # h = a + u * (b - a): dh/du = b - a
    d_gate(xp, u, f_u)
    f_u *= xp.subtract(b, a, out=scratch)
    xp.subtract(1.0, u, out=f_h)  # 1 - u
    ACTIVATIONS[attrs["activation"]][1](xp, c, f_c)
    f_c *= f_h if origin else u
    if origin:
        f_h[...] = u
    d_gate(xp, r, f_r)
    f_r *= h_prev
    dh_b = _batch_grad(xp, sb, d_hidden, reset_prev, "dh")
    w_ur_t, w_c_t = _transposed(xp, w_ur, "gru.w_ur_t"), _transposed(xp, w_c, "gru.w_c_t")
    tmp, d_rp = _scratch(xp, "gru.tmp2", (2, len(h0s), d), w.dtype), None  # frame products
    starts = sb.frame_starts.tolist()
    for t in range(sb.num_frames - 1, -1, -1):
        s, e = starts[t], starts[t + 1]
        n, dh = e - s, dh_b[s:e]
        xp.multiply(dh, f_u[s:e], out=dz3[s:e, 0])
        xp.multiply(dh, f_c[s:e], out=dz3[s:e, 2])
        d_rp = xp.matmul(dz3[s:e, 2], w_c_t, out=tmp[0, :n])
        xp.multiply(d_rp, f_r[s:e], out=dz3[s:e, 1])
        d_rp *= r[s:e]
        d_rp += xp.multiply(dh, f_h[s:e], out=tmp[1, :n])
        d_rp += xp.matmul(dz[s:e, :2 * d], w_ur_t, out=tmp[1, :n])  # dh_{t-1}; t = 0: dH0
        if t:
            dh_b[starts[t - 1]:starts[t - 1] + n] += d_rp
    dw = None
    if wanted(attrs, 2):  # the same memory split as the forward's
        dw = xp.concatenate([(h_prev.T @ dz[:, :2 * d]).reshape(-1),
                             (reset_prev.T @ dz[:, 2 * d:]).reshape(-1)]).reshape(d, 3 * d)
    db = dz.sum(axis=0, keepdims=True) if bias is not None and wanted(attrs, 3) else None
    return (sb.to_sequence(xp, dz) if wanted(attrs, 0) else None,
            _state_grad(xp, sb, d_rp, h0) if h0 is not None and wanted(attrs, 1) else None, dw, db)


# ------------------------------------------------------------ shape checks
def _infer_rnn(ctx, k):
    """Shared checks: Input [T, kD], Weight [D, kD], H0/C0 [N, D], Bias [1, kD] or [1, 7D]."""
    x, w, b = ctx.input("Input"), ctx.input("Weight"), ctx.input("Bias")
    known = len(w.shape) == 2 and min(w.shape) > 0
    if len(w.shape) != 2 or known and w.shape[1] != k * w.shape[0]:
        ctx.fail(f"Weight {list(w.shape)} must be [D, {k}*D] (D = hidden size)", slot="Weight")
    d = w.shape[0]
    if len(x.shape) != 2 or known and x.shape[1] not in (-1, w.shape[1]):
        ctx.fail(f"Input {list(x.shape)} must be [T, {k}*D] = [T, {w.shape[1]}] to match "
                 f"Weight {list(w.shape)}", slot="Input")
    for slot in ("H0", "C0"):
        s = ctx.input(slot)
        if s is not None and (len(s.shape) != 2 or d > 0 and s.shape[1] not in (-1, d)):
            ctx.fail(f"{slot} {list(s.shape)} must be [num_sequences, {d}] to match Weight "
                     f"{list(w.shape)}", slot=slot)
    width = 7 * d if k == 4 and ctx.attr("use_peepholes") else k * d
    if b is not None and (len(b.shape) != 2 or b.shape[0] not in (-1, 1)
                          or d > 0 and b.shape[1] not in (-1, width)):
        peep = " (use_peepholes adds 3*D peephole weights)" if k == 4 else ""
        ctx.fail(f"Bias {list(b.shape)} must be [1, {width}]{peep} for Weight {list(w.shape)}",
                 slot="Bias")
    return x, [x.shape[0], d]


def _infer_lstm(ctx):
    x, shape = _infer_rnn(ctx, 4)
    if ctx.input("Bias") is None:
        ctx.fail("Bias is required ([1, 4D], or [1, 7D] with use_peepholes)", slot="Bias")
    for slot, dims, lod_level in (("Hidden", shape, None), ("Cell", shape, None),
                                  ("BatchGate", x.shape, 0), ("BatchCellPreAct", shape, 0)):
        ctx.set_output(slot, dims, like=x, lod_level=lod_level)


def _infer_gru(ctx):
    x, shape = _infer_rnn(ctx, 3)
    for slot, dims, lod_level in (("BatchGate", x.shape, 0), ("BatchResetHiddenPrev", shape, 0),
                                  ("BatchHidden", shape, 0), ("Hidden", shape, None)):
        ctx.set_output(slot, dims, like=x, lod_level=lod_level)


def _act(name, default, what):
    return Attr(name, AttrType.STRING, default, one_of(*ACTIVATIONS), doc=f"{what} activation")


_REVERSE = Attr("is_reverse", AttrType.BOOLEAN, False, doc="walk each sequence from its end")
_IS_TEST = Attr("is_test", AttrType.BOOLEAN, False)
_H0 = Slot("H0", dispensable=True, doc="[N, D] initial hidden, one row per sequence")

register(
    "lstm",
    inputs=[Slot("Input", doc="[T, 4D] LoD: x-projections of the c~, i, f, o blocks"), _H0,
            Slot("C0", dispensable=True, doc="[N, D] initial cell, one row per sequence"),
            Slot("Weight", doc="[D, 4D] recurrent weights, blocks c~, i, f, o"),
            Slot("Bias", doc="[1, 4D] gate biases; [1, 7D] with w_ic, w_fc, w_oc peepholes")],
    outputs=[Slot("Hidden", doc="[T, D] LoD"), Slot("Cell", doc="[T, D] LoD"),
             Slot("BatchGate", intermediate=True, doc="activated gates, batch layout"),
             Slot("BatchCellPreAct", intermediate=True, doc="cell_activation(c), batch layout")],
    attrs=[Attr("use_peepholes", AttrType.BOOLEAN, True, doc="Bias carries w_ic, w_fc, w_oc"),
           _REVERSE, _IS_TEST, _act("gate_activation", "sigmoid", "i, f, o gates"),
           _act("cell_activation", "tanh", "h = o * act(c)"),
           _act("candidate_activation", "tanh", "candidate c~")],
    infer_shape=_infer_lstm, kernel=_lstm, lod=True,
    share_lod=(("Input", "Hidden"), ("Input", "Cell")),
    grad=GradSpec(_lstm_grad, inputs=("Input", "H0", "C0", "Weight", "Bias"),
                  outputs=("Hidden", "Cell", "BatchGate", "BatchCellPreAct"),
                  out_grads=("Hidden", "Cell"), in_grads=("Input", "H0", "C0", "Weight", "Bias")),
    doc="fused LSTM over LoD sequences (sequence-to-batch, no padding)", category="rnn")

register(
    "gru",
    inputs=[Slot("Input", doc="[T, 3D] LoD: x-projections of the u, r, c blocks"), _H0,
            Slot("Weight", doc="[D, 3D]: first 2*D*D values W_ur [D, 2D], last D*D W_c [D, D]"),
            Slot("Bias", dispensable=True, doc="[1, 3D]")],
    outputs=[Slot("BatchGate", intermediate=True, doc="activated u, r, c, batch layout"),
             Slot("BatchResetHiddenPrev", intermediate=True, doc="r * h_{t-1}, batch layout"),
             Slot("BatchHidden", intermediate=True, doc="h, batch layout"),
             Slot("Hidden", doc="[T, D] LoD")],
    attrs=[_act("activation", "tanh", "candidate c"), _act("gate_activation", "sigmoid", "u, r"),
           _REVERSE, Attr("origin_mode", AttrType.BOOLEAN, False, doc="h = u*h_prev + (1-u)*c"),
           _IS_TEST],
    infer_shape=_infer_gru, kernel=_gru, lod=True, share_lod=(("Input", "Hidden"),),
    grad=GradSpec(_gru_grad, inputs=("Input", "H0", "Weight", "Bias"),
                  outputs=("BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"),
                  out_grads=("Hidden",), in_grads=("Input", "H0", "Weight", "Bias")),
    doc="fused GRU over LoD sequences (sequence-to-batch, no padding)", category="rnn")
