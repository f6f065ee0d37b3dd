"""The inputs of a mixed layer (``mixed.py``): projections and operators.

Each is a description made by a public function (``full_matrix_projection(x)``...)
that remembers the user's line; the layer numbers it when it is added (``#k``), asks
``gives()`` for the width it fixes, and at the end of its ``with`` block calls
``lower(low)``, which appends the input's ops through ``Lowering`` and returns the
``[batch, size]`` Variable to sum. Op per input: full_matrix ``mul``, trans_full_matrix
``matmul_v2`` (trans_y), table ``lookup_table_v2``, identity none or ``slice``,
dot_mul / scaling ``elementwise_mul``, context ``context_projection``, dot_mul_operator
``elementwise_mul`` (+ ``scale``), conv_operator ``conv2d`` between ``reshape2``s.
"""
import abc
import math

from fluidscope.engine.errors import DesignError

from ..callsite import user_frame
from ..initializer import Constant
from ..param_attr import ParamAttr
from ..views import Variable

def _width(var):
    """Columns of ``var`` seen as [batch, width]; -1 when unknown."""
    dims = list(var.shape)[1:]
    return -1 if not dims or any(d < 0 for d in dims) else math.prod(dims)


# --------------------------------------------------------------- lowering
class Lowering:
    """Appends the ops of one input of one mixed layer, all through the layer's helper
    (one ``op_namescope``), with the input's own source line as ``op_callstack``."""

    def __init__(self, helper, size, dtype, site, flattened):
        self.helper, self.size, self.dtype, self.site = helper, size, dtype, site
        self.flattened = flattened  # var name -> its [batch, width] view, shared per layer

    def op(self, type, inputs, attrs=None, out_slot="Out", extra_outputs=()):
        out = self.helper.create_tmp(self.dtype)
        outputs = {out_slot: out}
        for slot in extra_outputs:  # XShape: shape only, never differentiated
            outputs[slot] = self.helper.create_tmp(self.dtype, stop_gradient=True)
        attrs = dict(attrs or {}, op_callstack=[self.site] if self.site else [])
        self.helper.append_op(type, inputs, outputs, attrs)
        return out

    def reshape(self, x, shape):
        return self.op("reshape2", {"X": x}, {"shape": list(shape)}, extra_outputs=("XShape",))

    def matrix(self, x):
        """``x`` as [batch, width] (a reshape2 only when it has more dims)."""
        if len(x.shape) == 2:
            return x
        if _width(x) < 0:
            raise DesignError(f"input '{x.name}' {list(x.shape)} needs known dims after dim 0 "
                              "to be flattened to [batch, width]")
        if x.name not in self.flattened:
            self.flattened[x.name] = self.reshape(x, [-1, _width(x)])
        return self.flattened[x.name]

    def param(self, attr, shape):
        return self.helper.create_parameter(attr, shape, self.dtype)


class MixedInput(abc.ABC):
    """One projection or operator: its inputs, the size it gives, how it lowers."""
    kind = "projection"
    needs_matrix = True  # inputs are [batch, width] (ids of a table are not)

    def __init__(self, *inputs):
        self.inputs, self.site, self.index = inputs, user_frame(), None
        for x in inputs:
            if not isinstance(x, Variable):
                raise DesignError(f"{self.kind}: input must be a Variable, got {x!r}")
            if self.needs_matrix and len(x.shape) < 2:
                raise DesignError(f"{self.kind}: input '{x.name}' has shape {list(x.shape)}; "
                                  "it needs [batch, width]")

    def gives(self):
        """The output width this input fixes, or None when it takes the layer's size."""
        return None

    def describe(self):
        names = ", ".join(x.name for x in self.inputs)
        return f"{self.kind} #{self.index} (input {names})"

    @abc.abstractmethod
    def lower(self, low: Lowering):
        """Append this input's ops through ``low``; return its [batch, size] output."""


def _known(width):
    return width if width > 0 else None


class FullMatrix(MixedInput):
    kind = "full_matrix_projection"

    def __init__(self, input, size, param_attr):
        super().__init__(input)
        self.size, self.attr = size or None, param_attr

    def gives(self):
        return self.size

    def _in_width(self):
        width = _width(self.inputs[0])
        if width < 0:
            raise DesignError(f"{self.describe()}: input shape {list(self.inputs[0].shape)} "
                              "must be known after dim 0 to size the weight")
        return width

    def lower(self, low):
        w = low.param(self.attr, [self._in_width(), low.size])
        return low.op("mul", {"X": self.inputs[0], "Y": w},
                      {"x_num_col_dims": 1, "y_num_col_dims": 1})


class TransFullMatrix(FullMatrix):
    kind = "trans_full_matrix_projection"

    def lower(self, low):
        w = low.param(self.attr, [low.size, self._in_width()])  # stored transposed
        return low.op("matmul_v2", {"X": low.matrix(self.inputs[0]), "Y": w}, {"trans_y": True})


class Table(MixedInput):
    kind = "table_projection"
    needs_matrix = False

    def __init__(self, input, size, param_attr, vocab_size):
        super().__init__(input)
        self.size, self.attr, self.vocab = size or None, param_attr, vocab_size
        ids = input.shape
        if input.dtype not in ("int64", "int32") or not (
                len(ids) == 1 or (len(ids) == 2 and ids[1] == 1)):
            raise DesignError(f"{self.kind}: ids '{input.name}' must be int64 [batch] or "
                              f"[batch, 1], got {input.dtype} {list(ids)}")

    def gives(self):
        return self.size

    def lower(self, low):
        vocab = self.vocab
        attr = ParamAttr.to_attr(self.attr)
        block = low.helper.main_program.global_block()
        if vocab is None and attr and attr.name and block.has_var(attr.name):
            vocab = block.var(attr.name).shape[0]  # a shared table knows its rows
        if not isinstance(vocab, int) or vocab <= 0:
            raise DesignError(f"{self.describe()}: give vocab_size (the table's rows); ids "
                              "do not carry it")
        w = low.param(attr, [vocab, low.size])
        out = low.op("lookup_table_v2", {"Ids": self.inputs[0], "W": w}, {"padding_idx": -1})
        return out if len(self.inputs[0].shape) == 1 else low.reshape(out, [-1, low.size])


class Identity(MixedInput):
    kind = "identity_projection"

    def __init__(self, input, offset, size):
        super().__init__(input)
        self.offset, self.size = offset, size or None
        width = _width(input)
        if offset is not None and (offset < 0 or (self.size and 0 <= width < offset + self.size)):
            raise DesignError(f"{self.kind}: columns [{offset}, {offset + (self.size or 0)}) "
                              f"are not inside input '{input.name}' of width {width}")

    def gives(self):
        return _known(_width(self.inputs[0])) if self.offset is None else self.size

    def lower(self, low):
        x = low.matrix(self.inputs[0])
        if self.offset is None:
            return x
        width = _width(self.inputs[0])
        if 0 <= width < self.offset + low.size:
            raise DesignError(f"{self.describe()}: columns [{self.offset}, "
                              f"{self.offset + low.size}) are not inside width {width}")
        return low.op("slice", {"Input": x}, {"axes": [1], "starts": [self.offset],
                                              "ends": [self.offset + low.size]})


class DotMul(MixedInput):
    kind = "dot_mul_projection"

    def __init__(self, input, param_attr, scalar=False):
        super().__init__(input)
        self.attr, self.scalar = param_attr, scalar
        if scalar:
            self.kind = "scaling_projection"

    def gives(self):
        return _known(_width(self.inputs[0]))

    def lower(self, low):
        w = low.param(self.attr, [1] if self.scalar else [low.size])
        return low.op("elementwise_mul", {"X": low.matrix(self.inputs[0]), "Y": w}, {"axis": -1})


class Context(MixedInput):
    kind = "context_projection"

    def __init__(self, input, context_len, context_start, padding_attr):
        super().__init__(input)
        if not isinstance(context_len, int) or context_len < 1:
            raise DesignError(f"{self.kind}: context_len must be an int >= 1, got {context_len!r}")
        self.length = context_len
        self.start = -((context_len - 1) // 2) if context_start is None else context_start
        self.up, self.down = max(0, -self.start), max(0, self.start + context_len - 1)
        self.padding = padding_attr

    def gives(self):
        width = _width(self.inputs[0])
        return _known(width) and width * self.length

    def lower(self, low):
        x = self.inputs[0]
        inputs, trainable = {"X": x}, self.padding not in (False, None) and self.up + self.down > 0
        if trainable:
            attr = ParamAttr.to_attr(self.padding)
            if attr.initializer is None:  # start from zero padding, what untrained means
                attr = ParamAttr(attr.name, Constant(0.0), attr.learning_rate,
                                 attr.regularizer, attr.trainable)
            inputs["PaddingData"] = low.param(attr, [self.up + self.down, _width(x)])
        return low.op("context_projection", inputs,
                      {"contextLength": self.length, "contextStart": self.start,
                       "paddingTrainable": trainable})


class DotMulOperator(MixedInput):
    kind = "dot_mul_operator"

    def __init__(self, a, b, scale):
        super().__init__(a, b)
        self.scale = float(scale)
        wa, wb = _width(a), _width(b)
        if wa >= 0 and wb >= 0 and wa != wb:
            raise DesignError(f"{self.kind}: a '{a.name}' {list(a.shape)} and b '{b.name}' "
                              f"{list(b.shape)} must have the same width ({wa} != {wb})")

    def gives(self):
        return _known(_width(self.inputs[0])) or _known(_width(self.inputs[1]))

    def lower(self, low):
        a, b = (low.matrix(v) for v in self.inputs)
        out = low.op("elementwise_mul", {"X": a, "Y": b}, {"axis": -1})
        return out if self.scale == 1.0 else low.op("scale", {"X": out}, {"scale": self.scale})


class ConvOperator(MixedInput):
    """Convolution of ``img`` by filters that another layer computes (Paddle v1).

    img: [B, C*H*W] with ``num_channels`` (H = W, as v1 assumes square images) or
    [B, C, H, W]. filter: [R, M*C*fy*fx] (or a 4-D [M, C, fy, fx]), laid out
    [M, C, fy, fx] per row. R = 1: one filter set shared by every row of img (one
    ``conv2d``). R = B: row b of img is convolved with filter row b, as in v1; that is
    one grouped ``conv2d`` (groups = B) over the batch folded into channels, so B must
    be fixed when the program is built (declare the data with a batch size). The
    output is [B, M*Ho*Wo], flattened like v1's; gradients reach img and filter.
    """
    kind = "conv_operator"

    def __init__(self, img, filter, fx, m, channels, sx, px, fy, sy, py):
        super().__init__(img, filter)
        shape = list(img.shape)
        if len(shape) == 4:
            if channels not in (None, shape[1]):
                raise DesignError(f"{self.kind}: num_channels={channels} but img "
                                  f"'{img.name}' is {shape}")
            channels, self.hw = shape[1], shape[2:]
        elif len(shape) == 2 and channels and shape[1] > 0 and shape[1] % channels == 0:
            side = math.isqrt(shape[1] // channels)
            if side * side != shape[1] // channels:
                raise DesignError(f"{self.kind}: img '{img.name}' width {shape[1]} is not "
                                  f"{channels} channels of a square image")
            self.hw = [side, side]
        else:
            raise DesignError(f"{self.kind}: img '{img.name}' {shape} must be [B, C, H, W] or "
                              "[B, C*H*W] with num_channels=C dividing the width")
        self.c, self.m = channels, m
        self.k, self.s, self.p = [fy or fx, fx], [sy or sx, sx], [px if py is None else py, px]
        self.out = [(n + 2 * p - k) // s + 1 for n, p, k, s in zip(self.hw, self.p, self.k, self.s)]
        if min(self.out) < 1 or min(self.p) < 0:
            raise DesignError(f"{self.kind}: a {self.k} filter with stride {self.s} and padding "
                              f"{self.p} does not fit image {self.hw}")
        fshape, self.fsize = list(filter.shape), m * channels * self.k[0] * self.k[1]
        if not (len(fshape) == 2 and fshape[1] == self.fsize) and fshape != [m, channels] + self.k:
            raise DesignError(f"{self.kind}: filter '{filter.name}' {fshape} must be "
                              f"[rows, {self.fsize}] (num_filters*channels*fy*fx) or "
                              f"{[m, channels] + self.k}")
        self.batch = shape[0]
        self.shared = len(fshape) == 4 or fshape[0] == 1
        if not self.shared and (self.batch < 1 or fshape[0] not in (-1, self.batch)):
            raise DesignError(
                f"{self.kind}: filter '{filter.name}' {fshape} has one filter set per row, which "
                f"needs img's batch fixed at build time and equal (img is {shape}); declare the "
                "data with a batch size, or give a 1-row filter shared by every row")

    def gives(self):
        return self.m * self.out[0] * self.out[1]

    def lower(self, low):
        img, filt = self.inputs
        c, (h, w), m = self.c, self.hw, self.m
        groups = 1 if self.shared else self.batch
        x = img if len(img.shape) == 4 and self.shared else low.reshape(
            img, [-1, c, h, w] if self.shared else [1, self.batch * c, h, w])
        f = filt if len(filt.shape) == 4 else low.reshape(filt, [m * groups, c] + self.k)
        y = low.op("conv2d", {"Input": x, "Filter": f},
                   {"strides": self.s, "paddings": self.p, "groups": groups}, out_slot="Output")
        return low.reshape(y, [-1 if self.shared else self.batch, low.size])
