"""ParamAttr: how a layer creates a parameter (name, initializer, learning rate, trainable)."""
from fluidscope.engine.errors import DesignError


class ParamAttr:
    """Options for a parameter a layer creates.

    name: the parameter's name (default: ``<layer>.w_<n>`` / ``.b_<n>``);
    initializer: an Initializer (default: Xavier for weights, Constant(0) for biases);
    learning_rate: multiplies the optimizer's rate for this parameter;
    trainable: False freezes it (no gradient, no update).
    """

    def __init__(self, name=None, initializer=None, learning_rate=1.0, regularizer=None,
                 trainable=True):
        self.name, self.initializer = name, initializer
        self.learning_rate, self.regularizer, self.trainable = learning_rate, regularizer, trainable

    @staticmethod
    def to_attr(arg):
        """Normalise what users pass as param_attr/bias_attr.

        None/True -> ParamAttr(); str -> ParamAttr(name=...); Initializer ->
        ParamAttr(initializer=...); False -> False (no parameter, e.g. no bias)."""
        from .initializer import Initializer
        if arg is None or arg is True:
            return ParamAttr()
        if arg is False:
            return False
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        raise DesignError(f"param_attr must be a ParamAttr, name, Initializer, None or False; got {arg!r}")

    def __repr__(self):
        return (f"ParamAttr(name={self.name!r}, initializer={self.initializer!r}, "
                f"learning_rate={self.learning_rate}, trainable={self.trainable})")
