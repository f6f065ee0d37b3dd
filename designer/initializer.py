"""Initializers: each appends one op to the startup program that fills a parameter."""
import math

from fluidscope.engine.ir.dtypes import to_var_type


class Initializer:
    """Base: ``init(var, startup_block)`` appends the op that fills ``var``."""

    def __call__(self, var, block):
        return self.init(var, block)

    def _op(self, block, var, type, attrs):
        attrs = dict(attrs, shape=list(var.shape), dtype=to_var_type(var.dtype))
        return block.append_op(type, outputs={"Out": var}, attrs=attrs)


class Constant(Initializer):
    """Every element = ``value``."""

    def __init__(self, value=0.0):
        self.value = float(value)

    def init(self, var, block):
        return self._op(block, var, "fill_constant", {"value": self.value})

    def __repr__(self):
        return f"Constant({self.value})"


class Uniform(Initializer):
    """Uniform in [low, high); seed 0 draws from the global generator."""

    def __init__(self, low=-1.0, high=1.0, seed=0):
        self.low, self.high, self.seed = float(low), float(high), int(seed)

    def init(self, var, block):
        return self._op(block, var, "uniform_random",
                        {"min": self.low, "max": self.high, "seed": self.seed})

    def __repr__(self):
        return f"Uniform({self.low}, {self.high})"


class Normal(Initializer):
    """Gaussian with mean ``loc`` and standard deviation ``scale``."""

    def __init__(self, loc=0.0, scale=1.0, seed=0):
        self.loc, self.scale, self.seed = float(loc), float(scale), int(seed)

    def init(self, var, block):
        return self._op(block, var, "gaussian_random",
                        {"mean": self.loc, "std": self.scale, "seed": self.seed})

    def __repr__(self):
        return f"Normal({self.loc}, {self.scale})"


def _fans(shape):
    """(fan_in, fan_out) as Paddle computes them: 2-D [in, out]; conv [out, in, k...]."""
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


class Xavier(Initializer):
    """Glorot: uniform in ±sqrt(6/(fan_in+fan_out)) or normal with std sqrt(2/(fan_in+fan_out))."""

    def __init__(self, uniform=True, fan_in=None, fan_out=None, seed=0):
        self.uniform, self.fan_in, self.fan_out, self.seed = uniform, fan_in, fan_out, int(seed)

    def init(self, var, block):
        fan_in, fan_out = _fans(var.shape)
        fan_in = self.fan_in if self.fan_in is not None else fan_in
        fan_out = self.fan_out if self.fan_out is not None else fan_out
        if self.uniform:
            limit = math.sqrt(6.0 / float(fan_in + fan_out))
            return self._op(block, var, "uniform_random", {"min": -limit, "max": limit, "seed": self.seed})
        std = math.sqrt(2.0 / float(fan_in + fan_out))
        return self._op(block, var, "gaussian_random", {"mean": 0.0, "std": std, "seed": self.seed})

    def __repr__(self):
        return f"Xavier(uniform={self.uniform})"


ConstantInitializer, UniformInitializer, NormalInitializer, XavierInitializer = (
    Constant, Uniform, Normal, Xavier)
