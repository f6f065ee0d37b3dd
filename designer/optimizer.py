"""Optimizers as ops: ``minimize(loss)`` appends backward, then one update op per
parameter (``sgd``, ``momentum``, ``adam``) with ``op_role`` optimize. The learning
rate and the accumulators are persistable variables initialised by the startup
program, named as Paddle names them (``learning_rate_0``, ``fc_0.w_0_moment1_0``)."""
from fluidscope.engine.ir.dtypes import to_var_type
from fluidscope.engine.errors import DesignError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.roles import OpRole

from . import framework, recording, unique_name
from .name_scopes import current_namescope
from .callsite import reports_at_user_line, user_frame
from .backward import append_backward
from .views import Operator

# An update op is a function of its slots' variables (names and VarDescs), its
# attributes, the op role, the name scope and the source line: a design's training build
# after one edit appends the same few hundred update ops again. Kept by exactly those
# (bounded), so only the ops whose inputs changed go through append_op's checks and
# shape inference again (issue #16). Only ops that changed no VarDesc are kept.
_UPDATE_OPS: dict = {}
UPDATE_MEMO_LIMIT = 20_000


def clear_update_memo():
    """Forget the kept update ops (tests build the same program with and without)."""
    _UPDATE_OPS.clear()


def _update_key(block, op_type, inputs, outputs, attrs):
    """The memo key of an update op, or None when a slot holds no single Variable."""
    slots = []
    for kind, given in (("in", inputs), ("out", outputs)):
        for slot in sorted(given):
            var = given[slot]
            if not hasattr(var, "desc"):
                return None
            slots.append((kind, slot, var.name, var.desc.SerializeToString()))
    frozen = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items()))
    return (block.idx, op_type, tuple(slots), frozen,
            int(block.program._op_role), current_namescope(), user_frame())


class Optimizer:
    """Base class. Subclasses name their op type and accumulators."""
    op_type = None
    accumulators = ()  # (name, fill value, shape: "param" or [1])

    def __init__(self, learning_rate, parameter_list=None, name=None):
        if not isinstance(learning_rate, (int, float)) or learning_rate <= 0:
            raise DesignError(f"{type(self).__name__}: learning_rate must be a positive number, got {learning_rate!r}")
        self.learning_rate = float(learning_rate)
        self.parameter_list = parameter_list
        self._name = name
        self._lr_var = {}

    @reports_at_user_line
    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """Append backward and the update ops. Returns (optimize ops, [(param, grad)])."""
        recording.note_minimize(self, loss, {"parameter_list": parameter_list,
                                             "no_grad_set": no_grad_set})
        params_grads = append_backward(loss, parameter_list or self.parameter_list, no_grad_set)
        if not params_grads:
            raise DesignError(f"{type(self).__name__}.minimize: loss '{loss.name}' depends on no "
                              "trainable parameter")
        startup = startup_program or framework.default_startup_program()
        return self.apply_gradients(params_grads, startup), params_grads

    def apply_gradients(self, params_grads, startup_program=None):
        startup = startup_program or framework.default_startup_program()
        program = params_grads[0][0].block.program
        ops = []
        with program._op_role_guard(OpRole.OPTIMIZE):
            lr = self._global_lr(program, startup)
            for param, grad in params_grads:
                accs = {name: self._accumulator(program, startup, param, name, value, shape)
                        for name, value, shape in self.accumulators}
                ops.append(self._append_op(program.global_block(), param, grad,
                                           self._param_lr(program, param, lr), accs))
        return ops

    # ------------------------------------------------------------ helpers
    def _persistable(self, program, startup, name, shape, dtype, value):
        main = program.global_block()
        var = main.create_var(name=name, shape=shape, dtype=dtype, persistable=True, stop_gradient=True)
        sblock = startup.global_block()
        svar = sblock.create_var(name=name, shape=shape, dtype=dtype, persistable=True,
                                 stop_gradient=True)
        sblock.append_op("fill_constant", outputs={"Out": svar},
                         attrs={"shape": list(shape), "dtype": to_var_type(dtype),
                                "value": float(value)})
        return var

    def _global_lr(self, program, startup):
        key = id(program)
        if key not in self._lr_var:
            self._lr_var[key] = self._persistable(
                program, startup, unique_name.generate("learning_rate"), [1], "float32",
                self.learning_rate)
        return self._lr_var[key]

    def _param_lr(self, program, param, lr):
        """ParamAttr(learning_rate=m) scales the global rate for that parameter."""
        factor = program.param_learning_rates.get(param.name, 1.0)
        if factor == 1.0:
            return lr
        block = program.global_block()
        out = block.create_var(name=unique_name.generate(f"{param.name}_lr"), dtype="float32",
                               stop_gradient=True)
        block.append_op("scale", {"X": lr}, {"Out": out}, {"scale": factor})
        return out

    def _accumulator(self, program, startup, param, name, value, shape):
        shape = list(param.shape) if shape == "param" else shape
        return self._persistable(program, startup, unique_name.generate(f"{param.name}_{name}"),
                                 shape, param.dtype, value)

    def _append_op(self, block, param, grad, lr, accs):
        inputs, outputs, attrs = self._op_slots(param, grad, lr, accs)
        attrs = dict(attrs, op_role_var=[param.name, grad.name])
        key = _update_key(block, self.op_type, inputs, outputs, attrs)
        kept = _UPDATE_OPS.get(key) if key is not None else None
        if kept is not None:
            block.desc.ops.append(pb.OpDesc.FromString(kept))
            block.program.bump_revision()
            return Operator(block, block.desc.ops[-1])
        op = block.append_op(self.op_type, inputs, outputs, attrs)
        if key is not None and all(outputs[slot].desc.SerializeToString() == before
                                   for kind, slot, _, before in key[2] if kind == "out"):
            if len(_UPDATE_OPS) >= UPDATE_MEMO_LIMIT:
                _UPDATE_OPS.clear()
            _UPDATE_OPS[key] = block.desc.ops[-1].SerializeToString()
        return op


class SGD(Optimizer):
    """param -= lr * grad."""
    op_type = "sgd"

    def _op_slots(self, param, grad, lr, accs):
        return {"Param": param, "Grad": grad, "LearningRate": lr}, {"ParamOut": param}, {}


class Momentum(Optimizer):
    """velocity = mu * velocity + grad; param -= lr * velocity (or Nesterov's form)."""
    op_type = "momentum"
    accumulators = (("velocity", 0.0, "param"),)

    def __init__(self, learning_rate, momentum=0.9, use_nesterov=False, parameter_list=None, name=None):
        super().__init__(learning_rate, parameter_list, name)
        self.momentum, self.use_nesterov = float(momentum), bool(use_nesterov)

    def _op_slots(self, param, grad, lr, accs):
        v = accs["velocity"]
        return ({"Param": param, "Grad": grad, "Velocity": v, "LearningRate": lr},
                {"ParamOut": param, "VelocityOut": v},
                {"mu": self.momentum, "use_nesterov": self.use_nesterov})


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction, as Paddle's ``adam`` op computes it."""
    op_type = "adam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameter_list=None, name=None):
        super().__init__(learning_rate, parameter_list, name)
        self.beta1, self.beta2, self.epsilon = float(beta1), float(beta2), float(epsilon)
        self.accumulators = (("moment1", 0.0, "param"), ("moment2", 0.0, "param"),
                             ("beta1_pow_acc", self.beta1, [1]), ("beta2_pow_acc", self.beta2, [1]))

    def _op_slots(self, param, grad, lr, accs):
        m1, m2 = accs["moment1"], accs["moment2"]
        b1, b2 = accs["beta1_pow_acc"], accs["beta2_pow_acc"]
        return ({"Param": param, "Grad": grad, "LearningRate": lr, "Moment1": m1, "Moment2": m2,
                 "Beta1Pow": b1, "Beta2Pow": b2},
                {"ParamOut": param, "Moment1Out": m1, "Moment2Out": m2,
                 "Beta1PowOut": b1, "Beta2PowOut": b2},
                {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon})


SGDOptimizer, MomentumOptimizer, AdamOptimizer = SGD, Momentum, Adam
