"""The numpy floor of ``benchmarks/lstm.py``: an LSTM forward + backward written by hand.

What a careful person would write with numpy alone, so that fluidscope is measured
against the best numpy can do, not against a strawman:

* **sequence to batch**: sequences sorted by length (longest first, stable); frame
  ``t`` holds row ``t`` of every sequence still alive, always a prefix of the sorted
  order, so every array is frame after frame and nothing is padded. The layout (index
  arrays, frame bounds) depends only on the lengths and is built once;
* **the x-projection** of all rows is one GEMM in batch order, the bias added once;
* **fused gate math**: the input, forget and output gate columns of the weights are
  scaled by 1/2 once per call, so one ``tanh`` over the frame's whole [n, 4H] gate block
  gives the candidate and, through sigmoid(z) = (tanh(z/2) + 1) / 2, the three gates;
  per frame: one GEMM of the alive prefix ``h[:n] @ W`` and eight element-wise calls;
* **a contiguous W^T** for the backward's per-frame ``dz @ W^T``, copied once per call:
  OpenBLAS runs a small-m GEMM against the transposed view ``W.T`` 1.5-3x slower;
* **hand-written BPTT**: every factor that does not depend on the incoming gradient
  (activation derivatives, o * tanh'(c), c_{t-1} * f') is computed for the whole batch
  before the loop; a frame then costs a GEMM and six element-wise calls. The weight
  gradients are one GEMM each over all rows after the loop, not a sum over frames;
* every scratch array is allocated once and reused (fresh pages cost more than math).

Gate layout as fluidscope's (and Paddle's) ``lstm``: blocks [candidate, input, forget,
output] of ``W_x`` [I, 4H], ``W`` [H, 4H] and ``b`` [4H]; no peepholes; h_0 = c_0 = 0.
The loss is ``sum(h * loss_weights)``.
"""
import numpy as np


class SeqLayout:
    """Sequence-to-batch layout of sequences of the given lengths (LoD order)."""

    def __init__(self, lengths):
        lengths = np.asarray(lengths, dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        order = np.argsort(-lengths, kind="stable")
        sorted_lengths = lengths[order]
        frames = int(sorted_lengths[0])
        self.batch_sizes = [int((sorted_lengths > t).sum()) for t in range(frames)]
        self.starts = [0] + np.cumsum(self.batch_sizes).tolist()
        # rows[j]: the sequence-order row that batch row j holds.
        self.rows = np.concatenate([offsets[order[:n]] + t for t, n in enumerate(self.batch_sizes)])
        # prev_rows: batch row of the previous step of every batch row in frames >= 1.
        self.prev_rows = np.concatenate(
            [np.arange(self.starts[t - 1], self.starts[t - 1] + n)
             for t, n in enumerate(self.batch_sizes) if t] or [np.zeros(0, np.int64)])
        self.total = int(offsets[-1])


class NumpyLSTM:
    """``step(x, loss_weights)`` -> (loss, {"x", "w_x", "w", "b"} gradients)."""

    def __init__(self, lengths, w_x, w, b):
        self.layout = lay = SeqLayout(lengths)
        self.w_x, self.w, self.b = w_x, w, b
        hidden, dtype = w.shape[0], w.dtype
        n, nmax = lay.total, lay.batch_sizes[0]
        # Column scale: 1 for the candidate block, 1/2 for the three gates (see above).
        self.scale = np.concatenate([np.ones(hidden), np.full(3 * hidden, 0.5)]).astype(dtype)
        self.w_half = np.empty_like(w)
        self.w_t = np.empty((4 * hidden, hidden), dtype)
        self.w_x_half = np.empty_like(w_x)
        self.xb = np.empty((n, w_x.shape[0]), dtype)
        self.gates = np.empty((n, 4 * hidden), dtype)  # activated [c~, i, f, o], batch order
        self.cell = np.empty((n, hidden), dtype)
        self.tanh_c = np.empty((n, hidden), dtype)
        self.hidden = np.empty((n, hidden), dtype)
        self.tmp = np.empty((nmax, 4 * hidden), dtype)
        self.tmp_h = np.empty((nmax, hidden), dtype)
        self.d_h = np.empty((n, hidden), dtype)
        self.d_c = np.empty((n, hidden), dtype)
        self.carry = np.empty((nmax, hidden), dtype)
        self.d_z = np.empty((n, 4 * hidden), dtype)
        self.f_o = np.empty((n, hidden), dtype)
        self.f_c = np.empty((n, hidden), dtype)
        self.f_cif = np.empty((n, 3, hidden), dtype)
        self.c_prev = np.zeros((n, hidden), dtype)
        self.h_prev = np.empty((n - nmax, hidden), dtype)
        self.d_x = np.empty((n, w_x.shape[0]), dtype)

    # ------------------------------------------------------------------ forward
    def forward(self, x):
        lay, hd = self.layout, self.w.shape[0]
        np.take(x, lay.rows, axis=0, out=self.xb)
        np.multiply(self.w_x, self.scale, out=self.w_x_half)
        np.multiply(self.w, self.scale, out=self.w_half)
        gates, cell, tanh_c, hidden, tmp = self.gates, self.cell, self.tanh_c, self.hidden, self.tmp
        np.matmul(self.xb, self.w_x_half, out=gates)
        gates += self.b * self.scale
        starts, w_half = lay.starts, self.w_half
        for t, n in enumerate(lay.batch_sizes):
            s, e = starts[t], starts[t + 1]
            g = gates[s:e]
            if t:
                p = starts[t - 1]
                np.matmul(hidden[p:p + n], w_half, out=tmp[:n])
                g += tmp[:n]
            np.tanh(g, out=g)
            ifo = g[:, hd:]
            ifo *= 0.5
            ifo += 0.5
            c = cell[s:e]
            np.multiply(g[:, :hd], g[:, hd:2 * hd], out=c)  # i * c~
            if t:
                fc = np.multiply(g[:, 2 * hd:3 * hd], cell[p:p + n], out=self.tmp_h[:n])
                c += fc
            np.tanh(c, out=tanh_c[s:e])
            np.multiply(g[:, 3 * hd:], tanh_c[s:e], out=hidden[s:e])
        return hidden

    # ----------------------------------------------------------------- backward
    def _factors(self):
        """Whole-batch factors of the backward (nothing here depends on dh or dc)."""
        lay, hd, n0 = self.layout, self.w.shape[0], self.layout.batch_sizes[0]
        g4 = self.gates.reshape(-1, 4, hd)
        cand, i, f, o = g4[:, 0], g4[:, 1], g4[:, 2], g4[:, 3]
        f_o, f_c, f_cif, c_prev = self.f_o, self.f_c, self.f_cif, self.c_prev
        np.take(self.cell, lay.prev_rows, axis=0, out=c_prev[n0:])
        # f_o = tanh(c) * o * (1 - o);  f_c = o * (1 - tanh(c)^2)
        np.subtract(1.0, o, out=f_o)
        f_o *= o
        f_o *= self.tanh_c
        np.multiply(self.tanh_c, self.tanh_c, out=f_c)
        np.subtract(1.0, f_c, out=f_c)
        f_c *= o
        # f_cif = [i * (1 - c~^2), c~ * i * (1 - i), c_{t-1} * f * (1 - f)]
        np.multiply(cand, cand, out=f_cif[:, 0])
        np.subtract(1.0, f_cif[:, 0], out=f_cif[:, 0])
        f_cif[:, 0] *= i
        np.subtract(1.0, g4[:, 1:3], out=f_cif[:, 1:])
        f_cif[:, 1:] *= g4[:, 1:3]
        f_cif[:, 1] *= cand
        f_cif[:, 2] *= c_prev
        return f

    def backward(self):
        """Gradients, with ``d_h`` already holding dLoss/dh in batch order."""
        lay, w_t = self.layout, self.w_t
        np.copyto(w_t, self.w.T)
        forget = self._factors()
        d_h, d_c, d_z, carry, tmp = self.d_h, self.d_c, self.d_z, self.carry, self.tmp_h
        f_o, f_c, f_cif = self.f_o, self.f_c, self.f_cif
        dz4 = d_z.reshape(-1, 4, w_t.shape[1])
        starts, sizes = lay.starts, lay.batch_sizes
        for t in range(len(sizes) - 1, -1, -1):
            s, e, n = starts[t], starts[t + 1], sizes[t]
            dh, dc = d_h[s:e], d_c[s:e]
            np.multiply(dh, f_o[s:e], out=dz4[s:e, 3])
            np.multiply(dh, f_c[s:e], out=dc)
            if t + 1 < len(sizes):
                dc[:sizes[t + 1]] += carry[:sizes[t + 1]]
            np.multiply(dc[:, None, :], f_cif[s:e], out=dz4[s:e, :3])
            if t:
                p = starts[t - 1]
                np.multiply(dc, forget[s:e], out=carry[:n])
                np.matmul(d_z[s:e], w_t, out=tmp[:n])
                d_h[p:p + n] += tmp[:n]
        n0 = sizes[0]
        np.take(self.hidden, lay.prev_rows, axis=0, out=self.h_prev)
        d_w = self.h_prev.T @ d_z[n0:]
        d_b = d_z.sum(axis=0)
        d_w_x = self.xb.T @ d_z
        d_x = self.d_x
        d_x[lay.rows] = d_z @ self.w_x.T
        return {"x": d_x, "w_x": d_w_x, "w": d_w, "b": d_b}

    def step(self, x, loss_weights):
        """Forward + backward; (loss, gradients). Gradient arrays are reused by the next call."""
        hidden = self.forward(x)
        # dLoss/dh = the loss weights, in batch order; the loss is their dot product with h.
        np.take(loss_weights, self.layout.rows, axis=0, out=self.d_h)
        loss = float(np.vdot(hidden, self.d_h))
        return loss, self.backward()
