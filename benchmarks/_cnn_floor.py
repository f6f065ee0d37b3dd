"""The ResNet-18-style network of ``cnn.py``: its shape, its weights, and the numpy floor.

The network (CIFAR-size input [N, 3, 32, 32], NCHW):

* stem: conv 3x3 (3 -> 64, stride 1, pad 1) + batch_norm + relu + max pool 3x3
  (stride 2, pad 1) -> [N, 64, 16, 16];
* four stages of two basic blocks, 64 / 128 / 256 / 512 channels, the first block of
  stages 2-4 with stride 2 (-> 8x8, 4x4, 2x2). A block is
  ``relu(bn(conv3x3(relu(bn(conv3x3(x))))) + shortcut(x))``, the shortcut x itself or,
  where the shape changes, bn(conv1x1 stride 2 (x));
* global average pool -> fc 512 -> 10 -> softmax cross entropy, mean over the batch.

17 3x3 convolutions and one fc (ResNet-18's 18 layers) plus three 1x1 shortcut
convolutions, no conv bias (as in ResNet): ResNet-18 with a 3x3 stem for 32x32 images. Training normalises with the batch statistics and updates the running
ones (``running * 0.9 + batch * 0.1``, biased batch variance, as Paddle's CPU kernel);
inference normalises with the running statistics.

``NumpyResNet`` is the floor: forward and backward written directly in numpy. It keeps
activations channel-major, [C, N, H, W], so that every convolution is one GEMM of the
filter [M, C*kh*kw] with the im2col columns [C*kh*kw, N*Ho*Wo] and gives [M, N, Ho, Wo]
with no transpose; batch norm then reduces contiguous rows of a [C, N*H*W] view. The
image is transposed once on entry. No gradient is formed for the image.
"""
import time

import numpy as np

STAGES = ((64, 1), (128, 2), (256, 2), (512, 2))  # (channels, stride of the first block)
BLOCKS_PER_STAGE = 2
STEM_CHANNELS = 64
CLASSES = 10
IMAGE = (3, 32, 32)
MOMENTUM = 0.9
EPSILON = 1e-5
BN_SLOTS = ("scale", "bias", "mean", "variance")


def blocks():
    """[(name, in channels, out channels, stride, has a conv shortcut)] of the basic blocks."""
    plan, channels = [], STEM_CHANNELS
    for stage, (width, first_stride) in enumerate(STAGES, 1):
        for index in range(BLOCKS_PER_STAGE):
            stride = first_stride if index == 0 else 1
            plan.append((f"s{stage}b{index}", channels, width, stride,
                         stride != 1 or channels != width))
            channels = width
    return plan


def convs():
    """[(prefix, out, in, kernel, stride, pad)] of every conv + batch_norm pair, in order."""
    layers = [("stem", STEM_CHANNELS, IMAGE[0], 3, 1, 1)]
    for name, cin, cout, stride, shortcut in blocks():
        layers += [(f"{name}.1", cout, cin, 3, stride, 1), (f"{name}.2", cout, cout, 3, 1, 1)]
        if shortcut:
            layers.append((f"{name}.sc", cout, cin, 1, stride, 0))
    return layers


def make_weights(seed=0):
    """name -> float32 array: ``{prefix}.w`` [out, in, k, k] (He normal), ``{prefix}.scale``,
    ``.bias``, ``.mean``, ``.variance`` [out] (random, so that a slot mixed up shows), and
    ``fc.w`` [512, 10] (Paddle's [in, out]), ``fc.b`` [10]."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    weights = {}
    for prefix, cout, cin, k, _, _ in convs():
        fan_in = cin * k * k
        weights[f"{prefix}.w"] = (rng.standard_normal((cout, cin, k, k), dtype=f32)
                                  * f32(np.sqrt(2.0 / fan_in)))
        weights[f"{prefix}.scale"] = rng.uniform(0.5, 1.5, cout).astype(f32)
        weights[f"{prefix}.bias"] = rng.uniform(-0.1, 0.1, cout).astype(f32)
        weights[f"{prefix}.mean"] = rng.uniform(-0.1, 0.1, cout).astype(f32)
        weights[f"{prefix}.variance"] = rng.uniform(0.5, 1.5, cout).astype(f32)
    width = STAGES[-1][0]
    weights["fc.w"] = rng.uniform(-1, 1, (width, CLASSES)).astype(f32) / f32(np.sqrt(width))
    weights["fc.b"] = rng.uniform(-0.1, 0.1, CLASSES).astype(f32)
    return weights


def trainable(name):
    """True for the weights SGD updates (not the running statistics)."""
    return not name.endswith((".mean", ".variance"))


# ------------------------------------------------------------------------ floor
class NumpyResNet:
    """The network by hand in numpy (the floor). ``forward(x)`` gives the logits with the
    running statistics; ``step(x, labels)`` is one SGD training step and returns the loss.
    ``spent`` (seconds per part, when ``profile`` is set) says where the time goes."""

    def __init__(self, weights, learning_rate, profile=False):
        self.params = {name: value.copy() for name, value in weights.items()}
        self.rate = np.float32(learning_rate)
        self.profile = profile
        self.spent = {}
        self._clock = time.perf_counter()

    def _tick(self, part):
        """Add the time since the last tick to ``part`` (only when profiling)."""
        if self.profile:
            now = time.perf_counter()
            self.spent[part] = self.spent.get(part, 0.0) + now - self._clock
            self._clock = now

    def _restart_clock(self):
        self._clock = time.perf_counter()

    # ---------------------------------------------------------------- convolution
    def _im2col(self, x, k, stride, pad):
        """Columns [C*k*k, N*Ho*Wo] of x [C, N, H, W] and the output size (Ho, Wo)."""
        c, n, h, width = x.shape
        ho, wo = (h + 2 * pad - k) // stride + 1, (width + 2 * pad - k) // stride + 1
        if k == 1 and pad == 0:
            cols = x[:, :, ::stride, ::stride] if stride > 1 else x
            return np.ascontiguousarray(cols).reshape(c, -1), (ho, wo)
        padded = np.zeros((c, n, h + 2 * pad, width + 2 * pad), dtype=x.dtype)
        padded[:, :, pad:pad + h, pad:pad + width] = x
        cols = np.empty((c, k, k, n, ho, wo), dtype=x.dtype)
        for i in range(k):
            for j in range(k):
                cols[:, i, j] = padded[:, :, i:i + stride * (ho - 1) + 1:stride,
                                       j:j + stride * (wo - 1) + 1:stride]
        return cols.reshape(c * k * k, -1), (ho, wo)

    def _conv(self, x, prefix, stride, pad):
        """x [C, N, H, W] -> ([M, N, Ho, Wo], the im2col columns [C*k*k, N*Ho*Wo])."""
        w = self.params[f"{prefix}.w"]
        m, _, k, _ = w.shape
        cols, (ho, wo) = self._im2col(x, k, stride, pad)
        self._tick("im2col")
        y = (w.reshape(m, -1) @ cols).reshape(m, x.shape[1], ho, wo)
        self._tick("conv gemm")
        return y, cols

    def _conv_backward(self, dy, cols, x_shape, prefix, stride, pad, need_dx=True):
        """(dx [C, N, H, W] or None, dFilter) from dy [M, N, Ho, Wo] and the saved columns.

        A stride-1 'same' conv's dx is the convolution of dy with the flipped filter, an
        im2col gather and one GEMM (faster than adding the column gradient back tap by
        tap); a strided conv's dx scatters the column gradient (col2im)."""
        w = self.params[f"{prefix}.w"]
        m, c, k, _ = w.shape
        dy2 = dy.reshape(m, -1)
        dw = (dy2 @ cols.T).reshape(w.shape)
        self._tick("conv gemm backward")
        if not need_dx:
            return None, dw
        _, n, h, width = x_shape
        ho, wo = dy.shape[2:]
        if stride == 1 and 2 * pad == k - 1:
            flipped = np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
            dcols, _ = self._im2col(dy, k, 1, pad)
            self._tick("dx columns")
            dx = (flipped.reshape(c, -1) @ dcols).reshape(x_shape)
            self._tick("conv gemm backward")
            return dx, dw
        dcols = w.reshape(m, -1).T @ dy2
        self._tick("conv gemm backward")
        if k == 1 and pad == 0:
            dx = np.zeros(x_shape, dtype=dy.dtype)
            dx[:, :, ::stride, ::stride] = dcols.reshape(c, n, ho, wo)
            self._tick("dx columns")
            return dx, dw
        dcols = dcols.reshape(c, k, k, n, ho, wo)
        dpad = np.zeros((c, n, h + 2 * pad, width + 2 * pad), dtype=dy.dtype)
        for i in range(k):
            for j in range(k):  # taps overlap: each adds into its strided window
                dpad[:, :, i:i + stride * (ho - 1) + 1:stride,
                     j:j + stride * (wo - 1) + 1:stride] += dcols[:, i, j]
        dx = np.ascontiguousarray(dpad[:, :, pad:pad + h, pad:pad + width])
        self._tick("dx columns")
        return dx, dw

    # ----------------------------------------------------------------- batch norm
    def _bn_train(self, x, prefix, relu):
        """Batch statistics; updates the running ones. Returns (y, xhat, inv std)."""
        p = self.params
        c = x.shape[0]
        rows = x.reshape(c, -1)
        mean = rows.mean(axis=1)
        xhat = rows - mean[:, None]
        var = np.einsum("ij,ij->i", xhat, xhat) / np.float32(rows.shape[1])
        inv = (1 / np.sqrt(var + np.float32(EPSILON))).astype(np.float32)
        xhat *= inv[:, None]
        y = xhat * p[f"{prefix}.scale"][:, None]
        y += p[f"{prefix}.bias"][:, None]
        if relu:
            np.maximum(y, 0, out=y)
        keep = np.float32(MOMENTUM)
        p[f"{prefix}.mean"] = p[f"{prefix}.mean"] * keep + mean * (1 - keep)
        p[f"{prefix}.variance"] = p[f"{prefix}.variance"] * keep + var * (1 - keep)
        self._tick("batch_norm")
        return y.reshape(x.shape), xhat, inv

    def _bn_backward(self, dy, xhat, inv, prefix):
        """(dx, dScale, dBias) of the batch-statistics normalisation (dy [C, ...])."""
        c = dy.shape[0]
        d = dy.reshape(c, -1)
        m = np.float32(d.shape[1])
        dbias = d.sum(axis=1)
        dscale = np.einsum("ij,ij->i", d, xhat)
        dx = xhat * (dscale / m)[:, None]
        np.subtract(d, dx, out=dx)
        dx -= (dbias / m)[:, None]
        dx *= (self.params[f"{prefix}.scale"] * inv)[:, None]
        self._tick("batch_norm backward")
        return dx.reshape(dy.shape), dscale, dbias

    def _bn_test(self, x, prefix, relu):
        p = self.params
        inv = 1 / np.sqrt(p[f"{prefix}.variance"] + np.float32(EPSILON))
        scale = p[f"{prefix}.scale"] * inv
        shift = p[f"{prefix}.bias"] - p[f"{prefix}.mean"] * scale
        y = x * scale[:, None, None, None]
        y += shift[:, None, None, None]
        if relu:
            np.maximum(y, 0, out=y)
        self._tick("batch_norm")
        return y

    # -------------------------------------------------------------------- pooling
    def _max_pool(self, x, training):
        """3x3, stride 2, pad 1 max pool of x [C, N, H, W], and (``training``) the first tap
        (row-major) holding each window's max, for the backward (else None)."""
        c, n, h, width = x.shape
        ho, wo = (h - 1) // 2 + 1, (width - 1) // 2 + 1
        padded = np.full((c, n, h + 2, width + 2), -np.inf, dtype=x.dtype)
        padded[:, :, 1:h + 1, 1:width + 1] = x
        taps = [padded[:, :, i:i + 2 * ho - 1:2, j:j + 2 * wo - 1:2]
                for i in range(3) for j in range(3)]
        out = taps[0].copy()
        if not training:
            for tap in taps[1:]:
                np.maximum(out, tap, out=out)
            self._tick("max pool")
            return out, None
        # The first tap holding the max is the last one that raised the running max
        # strictly, so it is the largest t * (tap t raised it): uint8 maxima, no masks.
        first = np.zeros(out.shape, dtype=np.uint8)
        for t in range(1, 9):
            raised = taps[t] > out
            np.maximum(out, taps[t], out=out)
            np.maximum(first, raised.view(np.uint8) * np.uint8(t), out=first)
        self._tick("max pool")
        return out, first

    def _max_pool_backward(self, dout, first, x_shape):
        c, n, h, width = x_shape
        ho, wo = dout.shape[2:]
        dpad = np.zeros((c, n, h + 2, width + 2), dtype=dout.dtype)
        for t in range(9):
            i, j = divmod(t, 3)
            dpad[:, :, i:i + 2 * ho - 1:2, j:j + 2 * wo - 1:2] += dout * (first == t)
        self._tick("max pool backward")
        return dpad[:, :, 1:h + 1, 1:width + 1]

    # --------------------------------------------------------------------- passes
    def forward(self, images):
        """Logits [N, 10] of images [N, 3, 32, 32] with the running statistics."""
        self._restart_clock()
        x = np.ascontiguousarray(images.transpose(1, 0, 2, 3))
        x = self._bn_test(self._conv(x, "stem", 1, 1)[0], "stem", True)
        x = self._max_pool(x, training=False)[0]
        for name, _, _, stride, shortcut in blocks():
            h = self._bn_test(self._conv(x, f"{name}.1", stride, 1)[0], f"{name}.1", True)
            h = self._bn_test(self._conv(h, f"{name}.2", 1, 1)[0], f"{name}.2", False)
            if shortcut:
                x = self._bn_test(self._conv(x, f"{name}.sc", stride, 0)[0], f"{name}.sc", False)
            h += x
            x = np.maximum(h, 0, out=h)
            self._tick("add + relu")
        logits = self._head(x)[0]
        return logits

    def _head(self, x):
        """(logits, pooled features [N, 512]) of the last stage's output [C, N, H, W]."""
        c, n = x.shape[:2]
        features = np.ascontiguousarray(x.reshape(c, n, -1).mean(axis=2).T)
        logits = features @ self.params["fc.w"]
        logits += self.params["fc.b"]
        self._tick("pool + fc")
        return logits, features

    def step(self, images, labels):
        """One SGD step on images [N, 3, 32, 32] and labels [N] (int); returns the loss."""
        self._restart_clock()
        grads, tape = {}, []
        x = np.ascontiguousarray(images.transpose(1, 0, 2, 3))
        y, cols = self._conv(x, "stem", 1, 1)
        y, xhat, inv = self._bn_train(y, "stem", True)
        stem = (x.shape, cols, xhat, inv, y)
        x, first = self._max_pool(y, training=True)
        for name, _, _, stride, shortcut in blocks():
            record = {"x": x}
            h, record["cols1"] = self._conv(x, f"{name}.1", stride, 1)
            h, record["xhat1"], record["inv1"] = self._bn_train(h, f"{name}.1", True)
            record["h"] = h
            y, record["cols2"] = self._conv(h, f"{name}.2", 1, 1)
            y, record["xhat2"], record["inv2"] = self._bn_train(y, f"{name}.2", False)
            if shortcut:
                s, record["cols_sc"] = self._conv(x, f"{name}.sc", stride, 0)
                s, record["xhat_sc"], record["inv_sc"] = self._bn_train(s, f"{name}.sc", False)
            else:
                s = x
            y += s
            x = np.maximum(y, 0, out=y)
            record["out"] = x
            tape.append(record)
            self._tick("add + relu")
        logits, features = self._head(x)
        loss, dz = _softmax_cross_entropy(logits, labels)
        grads["fc.w"], grads["fc.b"] = features.T @ dz, dz.sum(axis=0)
        dfeat = dz @ self.params["fc.w"].T
        c, n, h, w = x.shape
        dx = np.empty(x.shape, dtype=x.dtype)
        dx[...] = (dfeat.T / np.float32(h * w))[:, :, None, None]
        self._tick("pool + fc")
        for (name, _, _, stride, shortcut), record in zip(reversed(blocks()), reversed(tape)):
            dx *= record["out"] > 0  # the block's final relu
            self._tick("add + relu")
            dsum = dx
            dy, grads[f"{name}.2.scale"], grads[f"{name}.2.bias"] = self._bn_backward(
                dsum, record["xhat2"], record["inv2"], f"{name}.2")
            dh, grads[f"{name}.2.w"] = self._conv_backward(dy, record["cols2"], record["h"].shape,
                                                          f"{name}.2", 1, 1)
            dh *= record["h"] > 0
            self._tick("add + relu")
            dh, grads[f"{name}.1.scale"], grads[f"{name}.1.bias"] = self._bn_backward(
                dh, record["xhat1"], record["inv1"], f"{name}.1")
            x_shape = record["x"].shape
            dx, grads[f"{name}.1.w"] = self._conv_backward(dh, record["cols1"], x_shape,
                                                          f"{name}.1", stride, 1)
            if shortcut:
                ds, grads[f"{name}.sc.scale"], grads[f"{name}.sc.bias"] = self._bn_backward(
                    dsum, record["xhat_sc"], record["inv_sc"], f"{name}.sc")
                ds, grads[f"{name}.sc.w"] = self._conv_backward(ds, record["cols_sc"], x_shape,
                                                               f"{name}.sc", stride, 0)
                dx += ds
            else:
                dx += dsum
            self._tick("add + relu")
        x_shape, cols, xhat, inv, y = stem
        dy = self._max_pool_backward(dx, first, y.shape)
        dy *= y > 0
        dy, grads["stem.scale"], grads["stem.bias"] = self._bn_backward(dy, xhat, inv, "stem")
        _, grads["stem.w"] = self._conv_backward(dy, cols, x_shape, "stem", 1, 1, need_dx=False)
        for name, grad in grads.items():
            grad *= self.rate
            self.params[name] -= grad
        self._tick("sgd")
        return loss


def _softmax_cross_entropy(logits, labels):
    """(mean loss, dLoss/dlogits) of a stable softmax cross entropy over the rows."""
    rows = np.arange(logits.shape[0])
    z = logits - logits.max(axis=1, keepdims=True)
    picked = z[rows, labels]
    np.exp(z, out=z)
    total = z.sum(axis=1)
    loss = float((np.log(total) - picked).mean())
    z /= total[:, None]
    z[rows, labels] -= 1
    z *= np.float32(1.0 / logits.shape[0])
    return loss, z
