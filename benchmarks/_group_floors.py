"""The numpy floors of ``benchmarks/recurrent_groups.py``: a GRU and a plain RNN, forward
and backward written by hand, the way ``_lstm_floor.py`` writes the LSTM.

The same care as there (read its docstring): sequence to batch with the layout built
once (``SeqLayout``), the input projection of all rows as one GEMM with the bias added
once, sigmoid through tanh with the gate columns pre-scaled by 1/2, contiguous W^T
copies for the backward's per-frame products, every factor that does not depend on the
incoming gradient computed for the whole batch before the loop, the weight gradients
as one GEMM each after it, and scratch arrays allocated once.

* GRU, as fluidscope's ``gru_group`` / ``dynamic_gru`` (origin_mode False): with
  ``g = x @ W_x + b`` split [update, reset, candidate],
  ``u, r = sigmoid(g_ur + h_prev @ W_ur)``, ``c = tanh(g_c + (r * h_prev) @ W_c)``,
  ``h = h_prev + u * (c - h_prev)``; h_0 = 0.
* RNN, a ``recurrent_group`` whose step is ``fc([x_t, h_prev], act="tanh")``:
  ``h = tanh(x @ W_0 + h_prev @ W_1 + b)``; h_0 = 0.

Both losses are ``sum(h * loss_weights)``; ``step(x, loss_weights)`` returns (loss,
gradients by name).
"""
import numpy as np

from _lstm_floor import SeqLayout


class NumpyGRU:
    """Gradients "x", "w_x" [I, 3H], "w_ur" [H, 2H], "w_c" [H, H], "b" [3H]."""

    def __init__(self, lengths, w_x, w_ur, w_c, b):
        self.layout = lay = SeqLayout(lengths)
        self.w_x, self.w_ur, self.w_c, self.b = w_x, w_ur, w_c, b
        hd, dtype = w_c.shape[0], w_c.dtype
        n, nmax = lay.total, lay.batch_sizes[0]
        self.scale = np.concatenate([np.full(2 * hd, 0.5), np.ones(hd)]).astype(dtype)
        self.w_x_s, self.w_ur_half = np.empty_like(w_x), np.empty_like(w_ur)
        self.w_ur_t, self.w_c_t = np.empty((2 * hd, hd), dtype), np.empty((hd, hd), dtype)
        self.xb = np.empty((n, w_x.shape[0]), dtype)
        self.gates = np.empty((n, 3 * hd), dtype)  # activated [u, r, c], batch order
        self.h_prev = np.zeros((n, hd), dtype)     # h_{t-1} of every row (0 in frame 0)
        self.rh = np.zeros((n, hd), dtype)         # r * h_{t-1}
        self.hidden = np.empty((n, hd), dtype)
        self.tmp = np.empty((nmax, 2 * hd), dtype)
        self.tmp_h = np.empty((nmax, hd), dtype)
        self.d_h = np.empty((n, hd), dtype)
        self.d_z = np.empty((n, 3 * hd), dtype)
        self.f_u = np.empty((n, hd), dtype)
        self.f_c = np.empty((n, hd), dtype)
        self.f_r = np.empty((n, hd), dtype)
        self.keep = np.empty((n, hd), dtype)
        self.d_hp = np.empty((nmax, hd), dtype)
        self.d_x = np.empty((n, w_x.shape[0]), dtype)

    def forward(self, x):
        lay, hd = self.layout, self.w_c.shape[0]
        np.take(x, lay.rows, axis=0, out=self.xb)
        np.multiply(self.w_x, self.scale, out=self.w_x_s)
        np.multiply(self.w_ur, 0.5, out=self.w_ur_half)
        gates, hidden, h_prev, rh = self.gates, self.hidden, self.h_prev, self.rh
        np.matmul(self.xb, self.w_x_s, out=gates)
        gates += self.b * self.scale
        starts = lay.starts
        for t, n in enumerate(lay.batch_sizes):
            s, e = starts[t], starts[t + 1]
            g = gates[s:e]
            ur, c = g[:, :2 * hd], g[:, 2 * hd:]
            if t:
                p = starts[t - 1]
                hp = h_prev[s:e]
                np.copyto(hp, hidden[p:p + n])
                np.matmul(hp, self.w_ur_half, out=self.tmp[:n])
                ur += self.tmp[:n]
            np.tanh(ur, out=ur)
            ur *= 0.5
            ur += 0.5
            if t:
                np.multiply(g[:, hd:2 * hd], hp, out=rh[s:e])
                np.matmul(rh[s:e], self.w_c, out=self.tmp_h[:n])
                c += self.tmp_h[:n]
            np.tanh(c, out=c)
            h = hidden[s:e]
            np.subtract(c, h_prev[s:e], out=h)  # h = h_prev + u * (c - h_prev)
            h *= g[:, :hd]
            h += h_prev[s:e]
        return hidden

    def _factors(self):
        """dz_u = dh * f_u, dz_c = dh * f_c, dz_r = (dz_c @ W_c^T) * f_r, keep = 1 - u."""
        hd = self.w_c.shape[0]
        u, r, c = self.gates[:, :hd], self.gates[:, hd:2 * hd], self.gates[:, 2 * hd:]
        f_u, f_c, f_r, keep = self.f_u, self.f_c, self.f_r, self.keep
        np.subtract(1.0, u, out=keep)
        np.subtract(c, self.h_prev, out=f_u)  # (c - h_prev) * u * (1 - u)
        f_u *= u
        f_u *= keep
        np.multiply(c, c, out=f_c)            # u * (1 - c^2)
        np.subtract(1.0, f_c, out=f_c)
        f_c *= u
        np.subtract(1.0, r, out=f_r)          # h_prev * r * (1 - r)
        f_r *= r
        f_r *= self.h_prev

    def backward(self):
        lay, hd = self.layout, self.w_c.shape[0]
        np.copyto(self.w_ur_t, self.w_ur.T)
        np.copyto(self.w_c_t, self.w_c.T)
        self._factors()
        d_h, d_z, d_hp, tmp = self.d_h, self.d_z, self.d_hp, self.tmp_h
        r = self.gates[:, hd:2 * hd]
        starts, sizes = lay.starts, lay.batch_sizes
        for t in range(len(sizes) - 1, -1, -1):
            s, e, n = starts[t], starts[t + 1], sizes[t]
            dh = d_h[s:e]
            dz_u, dz_r, dz_c = d_z[s:e, :hd], d_z[s:e, hd:2 * hd], d_z[s:e, 2 * hd:]
            np.multiply(dh, self.f_u[s:e], out=dz_u)
            np.multiply(dh, self.f_c[s:e], out=dz_c)
            if not t:
                dz_r[:] = 0
                break
            np.matmul(dz_c, self.w_c_t, out=tmp[:n])  # d(r * h_prev)
            np.multiply(tmp[:n], self.f_r[s:e], out=dz_r)
            dhp = d_hp[:n]
            np.multiply(dh, self.keep[s:e], out=dhp)
            tmp[:n] *= r[s:e]
            dhp += tmp[:n]
            np.matmul(d_z[s:e, :2 * hd], self.w_ur_t, out=tmp[:n])
            dhp += tmp[:n]
            p = starts[t - 1]
            d_h[p:p + n] += dhp
        n0 = sizes[0]
        d_w_ur = self.h_prev[n0:].T @ d_z[n0:, :2 * hd]
        d_w_c = self.rh[n0:].T @ d_z[n0:, 2 * hd:]
        d_b = d_z.sum(axis=0)
        d_w_x = self.xb.T @ d_z
        self.d_x[lay.rows] = d_z @ self.w_x.T
        return {"x": self.d_x, "w_x": d_w_x, "w_ur": d_w_ur, "w_c": d_w_c, "b": d_b}

    def step(self, x, loss_weights):
        hidden = self.forward(x)
        np.take(loss_weights, self.layout.rows, axis=0, out=self.d_h)
        loss = float(np.vdot(hidden, self.d_h))
        return loss, self.backward()


class NumpyRNN:
    """Gradients "x", "w_0" [I, H], "w_1" [H, H], "b" [H]."""

    def __init__(self, lengths, w_0, w_1, b):
        self.layout = lay = SeqLayout(lengths)
        self.w_0, self.w_1, self.b = w_0, w_1, b
        hd, dtype = w_1.shape[0], w_1.dtype
        n, nmax = lay.total, lay.batch_sizes[0]
        self.w_1_t = np.empty_like(w_1)
        self.xb = np.empty((n, w_0.shape[0]), dtype)
        self.hidden = np.empty((n, hd), dtype)
        self.tmp = np.empty((nmax, hd), dtype)
        self.d_h = np.empty((n, hd), dtype)
        self.d_z = np.empty((n, hd), dtype)
        self.h_prev = np.empty((n - nmax, hd), dtype)
        self.d_x = np.empty((n, w_0.shape[0]), dtype)

    def forward(self, x):
        lay, hidden = self.layout, self.hidden
        np.take(x, lay.rows, axis=0, out=self.xb)
        np.matmul(self.xb, self.w_0, out=hidden)
        hidden += self.b
        starts = lay.starts
        for t, n in enumerate(lay.batch_sizes):
            s, e = starts[t], starts[t + 1]
            h = hidden[s:e]
            if t:
                p = starts[t - 1]
                np.matmul(hidden[p:p + n], self.w_1, out=self.tmp[:n])
                h += self.tmp[:n]
            np.tanh(h, out=h)
        return hidden

    def backward(self):
        lay, d_h, d_z, tmp = self.layout, self.d_h, self.d_z, self.tmp
        np.copyto(self.w_1_t, self.w_1.T)
        np.multiply(self.hidden, self.hidden, out=d_z)  # 1 - h^2, whole batch
        np.subtract(1.0, d_z, out=d_z)
        starts, sizes = lay.starts, lay.batch_sizes
        for t in range(len(sizes) - 1, -1, -1):
            s, e, n = starts[t], starts[t + 1], sizes[t]
            dz = d_z[s:e]
            dz *= d_h[s:e]
            if t:
                p = starts[t - 1]
                np.matmul(dz, self.w_1_t, out=tmp[:n])
                d_h[p:p + n] += tmp[:n]
        n0 = sizes[0]
        np.take(self.hidden, lay.prev_rows, axis=0, out=self.h_prev)
        d_w_1 = self.h_prev.T @ d_z[n0:]
        d_w_0 = self.xb.T @ d_z
        self.d_x[lay.rows] = d_z @ self.w_0.T
        return {"x": self.d_x, "w_0": d_w_0, "w_1": d_w_1, "b": d_z.sum(axis=0)}

    def step(self, x, loss_weights):
        hidden = self.forward(x)
        np.take(loss_weights, self.layout.rows, axis=0, out=self.d_h)
        loss = float(np.vdot(hidden, self.d_h))
        return loss, self.backward()
