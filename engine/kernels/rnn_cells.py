"""One time step of the cells of Paddle's fused ``rnn`` op, batched over the N samples.

Layouts, checked numerically against Paddle 3.3.1 (its CPU kernel, ``rnn_kernel.cc``):

* LSTM: the 4H rows of weight_ih / weight_hh / the biases are the gates i, f, g, o::

      z = x W_ih^T + b_ih + h W_hh^T + b_hh      i, f, o = sigmoid, g = tanh
      c' = f * c + i * g                         h' = o * tanh(c')

* GRU: the 3H rows are r, z, c, with the reset applied *after* the hidden projection and
  two candidate biases (as cuDNN; Paddle's ``GRUUnitFunctorV2``)::

      hh = h W_hh^T + b_hh                       r = sigmoid(xr + hh_r), z = sigmoid(xz + hh_z)
      c~ = tanh(xc + r * hh_c)                   h' = z * h + (1 - z) * c~
      where [xr, xz, xc] = x W_ih^T + b_ih

* RNN_TANH / RNN_RELU: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh).

None of them clips the sigmoid's input: the rnn kernel asks for "sigmoid_v2"/"tanh_v2",
unlike the older ``lstm``/``gru`` ops (kernels/rnn.py).

``pre`` is the input projection of the step (x W_ih^T + b_ih, and + b_hh where the bias
goes in unchanged: every mode but GRU). Each forward step writes what its backward
needs into ``store`` [N, BLOCKS[mode] * H]:

* LSTM: i, f, g, o (activated), c', h, c          * GRU: r, z, c~, hh_c, h
* RNN_*: h', h
"""
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
BLOCKS = {"LSTM": 7, "GRU": 5, "RNN_TANH": 2, "RNN_RELU": 2}
H_PREV = {"LSTM": 5, "GRU": 4, "RNN_TANH": 1, "RNN_RELU": 1}  # block of h_{t-1} in store


def sigmoid(xp, z, out):
    """sigmoid(z) = (tanh(z / 2) + 1) / 2: no overflow warning for large -z."""
    xp.multiply(z, 0.5, out=out)
    xp.tanh(out, out=out)
    out *= 0.5
    out += 0.5
    return out


def forward(xp, mode, pre, h, c, w_hh_t, b_hh, store):
    """One step from state (h, c) (c None but for LSTM); returns (h', c')."""
    hs = h.shape[1]
    blk = store.reshape(store.shape[0], -1, hs)  # [N, blocks, H] view of store
    if mode == "LSTM":
        z = (h @ w_hh_t).reshape(-1, 4, hs)  # fresh: blk[:, :4] cannot be reshaped in place
        z += pre.reshape(-1, 4, hs)
        sigmoid(xp, z[:, :2], z[:, :2])
        xp.tanh(z[:, 2], out=z[:, 2])
        sigmoid(xp, z[:, 3], z[:, 3])
        blk[:, :4] = z
        i, f, g, o = z[:, 0], z[:, 1], z[:, 2], z[:, 3]
        c_new = xp.multiply(f, c, out=blk[:, 4])
        c_new += i * g
        blk[:, 5], blk[:, 6] = h, c
        return o * xp.tanh(c_new), c_new
    if mode == "GRU":
        hh = h @ w_hh_t
        hh += b_hh
        rz = hh[:, :2 * hs] + pre[:, :2 * hs]
        blk[:, :2] = sigmoid(xp, rz, rz).reshape(-1, 2, hs)
        r, z, cand = blk[:, 0], blk[:, 1], blk[:, 2]
        blk[:, 3] = hh[:, 2 * hs:]
        xp.multiply(r, blk[:, 3], out=cand)
        cand += pre[:, 2 * hs:]
        xp.tanh(cand, out=cand)
        blk[:, 4] = h
        return cand + z * (h - cand), None  # z * h + (1 - z) * c~
    raw = blk[:, 0]
    xp.add(pre, h @ w_hh_t, out=raw)
    if mode == "RNN_TANH":
        xp.tanh(raw, out=raw)
    else:
        xp.maximum(raw, 0, out=raw)
    blk[:, 1] = h
    return raw.copy(), None


def backward(xp, mode, store, dh_new, dc_new, w_hh):
    """Backward of one step from the gradients of h' and c' (dc_new None but for LSTM).

    Returns (d_pre, d_hh, dh, dc): d_pre [N, G*H] the gradient of the step's input
    projection (for W_ih, b_ih and the layer input), d_hh [N, G*H] that of h W_hh^T (+ b_hh;
    differs from d_pre only for GRU's candidate), dh / dc those of the previous state."""
    n, hs = dh_new.shape
    blk = store.reshape(n, -1, hs)
    if mode == "LSTM":
        i, f, g, o, c_new, c = blk[:, 0], blk[:, 1], blk[:, 2], blk[:, 3], blk[:, 4], blk[:, 6]
        tc = xp.tanh(c_new)
        d = xp.empty((n, 4, hs), dtype=store.dtype)
        dc_raw = dh_new * o * (1 - tc * tc)
        if dc_new is not None:
            dc_raw += dc_new
        d[:, 0] = dc_raw * g * i * (1 - i)
        d[:, 1] = dc_raw * c * f * (1 - f)
        d[:, 2] = dc_raw * i * (1 - g * g)
        d[:, 3] = dh_new * tc * o * (1 - o)
        d = d.reshape(n, -1)
        return d, d, d @ w_hh, dc_raw * f
    if mode == "GRU":
        r, z, cand, hh_c, h = blk[:, 0], blk[:, 1], blk[:, 2], blk[:, 3], blk[:, 4]
        d_pre = xp.empty((n, 3, hs), dtype=store.dtype)
        d_pre[:, 2] = dh_new * (1 - z) * (1 - cand * cand)
        d_pre[:, 1] = dh_new * (h - cand) * z * (1 - z)
        d_pre[:, 0] = d_pre[:, 2] * hh_c * r * (1 - r)
        d_hh = d_pre.copy()
        d_hh[:, 2] *= r
        d_pre, d_hh = d_pre.reshape(n, -1), d_hh.reshape(n, -1)
        return d_pre, d_hh, dh_new * z + d_hh @ w_hh, None
    raw = blk[:, 0]
    d = dh_new * (1 - raw * raw) if mode == "RNN_TANH" else dh_new * (raw > 0)
    return d, d, d @ w_hh, None
