"""LayerHelper: what every layer function uses to make its parameters, vars and ops."""
from fluidscope.engine.errors import DesignError

from . import framework, recording, unique_name
from .callsite import user_frame
from .initializer import Constant, Xavier
from .param_attr import ParamAttr


class LayerHelper:
    """Names a layer (``fc_0``), creates its parameters in the main program with their
    initializer in the startup program, its temporaries (``fc_0.tmp_0``) and its ops,
    which record the layer in ``op_namescope`` and in error messages."""

    def __init__(self, layer_type, name=None):
        self.layer_type = layer_type
        if name:
            unique_name.reserve(name)  # so later unnamed layers never reuse this name
        self.name = name or unique_name.generate(layer_type)
        recording.note_helper(self.name)

    @property
    def main_program(self):
        return framework.default_main_program()

    @property
    def startup_program(self):
        return framework.default_startup_program()

    @property
    def block(self):
        return self.main_program.current_block()

    def error(self, message):
        """A DesignError naming this layer and the user's line, as op errors do:
        ``conv2d layer 'conv2d_0' (at model.py:12): ...``."""
        site = user_frame()
        where = f" (at {site})" if site else ""
        return DesignError(f"{self.layer_type} layer '{self.name}'{where}: {message}")

    def create_parameter(self, attr, shape, dtype="float32", is_bias=False,
                         default_initializer=None):
        """A parameter of ``shape`` per ``attr`` (a ParamAttr or False); None when False.
        ``default_initializer``: used when ``attr`` names none (Paddle's layers pick
        theirs: a conv's He normal, a norm's ones)."""
        attr = ParamAttr.to_attr(attr)
        if attr is False:
            return None
        suffix = "b" if is_bias else "w"
        name = attr.name or unique_name.generate(f"{self.name}.{suffix}")
        if any(d is None or d < 0 for d in shape):
            raise DesignError(
                f"{self.layer_type} layer '{self.name}': parameter {name} would have shape "
                f"{list(shape)}; its input needs known sizes there")
        main_block = self.main_program.global_block()
        if main_block.has_var(name):
            existing = main_block.var(name)
            if list(existing.shape) != list(shape):
                raise DesignError(
                    f"{self.layer_type} layer '{self.name}': parameter {name} is shared but has "
                    f"shape {list(existing.shape)}, this layer needs {list(shape)}")
            return existing
        param = main_block.create_parameter(name, shape, dtype, trainable=attr.trainable)
        init = attr.initializer or default_initializer or (Constant(0.0) if is_bias else Xavier())
        startup_block = self.startup_program.global_block()
        startup_var = startup_block.create_parameter(name, shape, dtype, trainable=attr.trainable)
        init(startup_var, startup_block)
        if attr.learning_rate != 1.0:
            self.main_program.param_learning_rates[name] = float(attr.learning_rate)
        return param

    def create_tmp(self, dtype="float32", stop_gradient=False, lod_level=0):
        """A temporary output (shape filled in by the op that writes it)."""
        return self.block.create_var(name=unique_name.generate(f"{self.name}.tmp"), dtype=dtype,
                                     stop_gradient=stop_gradient, lod_level=lod_level)

    def append_op(self, type, inputs=None, outputs=None, attrs=None):
        return self.block.append_op(type, inputs, outputs, attrs, layer=self)

    def append_activation(self, x, act):
        """Apply activation ``act`` (a registered op name such as 'relu', or None)."""
        if act is None:
            return x
        out = self.create_tmp(x.dtype)
        self.append_op(act, {"X": x}, {"Out": out})
        return out
