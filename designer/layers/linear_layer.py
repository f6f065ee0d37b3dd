"""``linear``: what ``paddle.nn.Linear`` builds in a static program, as a layer function.

Paddle's Linear is ``x @ W + b`` over the last axis of an input of any rank: op
``matmul_v2`` (``<name>.tmp_0``) then ``elementwise_add`` on axis -1 (``<name>.tmp_1``),
weight ``<name>.w_0`` [in_features, size] (Xavier), bias ``<name>.b_0`` [size] (zero).
``fc`` differs: it flattens its input to 2-D at ``num_flatten_dims`` and multiplies with
``mul``. A Paddle file holding a Linear reads back as this layer
(``Design.from_program(program, layers=True)``, design/lift.py).
"""
from ..layer_helper import LayerHelper
from ..layer_specs import layer_spec

__all__ = ["linear"]


@layer_spec("nn", inputs={"x": "tensor"}, types={"size": "int"})
def linear(x, size, param_attr=None, bias_attr=None, name=None):
    """x [..., in_features] @ W [in_features, size] + b [size] -> [..., size].

    ``bias_attr=False``: no bias (the matmul_v2 only). As ``paddle.nn.Linear(in_features,
    size, weight_attr=param_attr, bias_attr=bias_attr)`` called on ``x``; no activation.
    """
    helper = LayerHelper("linear", name)
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise helper.error(f"size must be a positive int, got {size!r}")
    shape = list(x.shape)
    if not shape or shape[-1] < 0:
        raise helper.error(f"input '{x.name}' has shape {shape}; its last axis (the "
                           "in_features the weight is sized by) must be known")
    if param_attr is False:
        raise helper.error("param_attr cannot be False: a linear layer needs its weight")
    weight = helper.create_parameter(param_attr, [shape[-1], size], x.dtype)
    out = helper.create_tmp(x.dtype)
    helper.append_op("matmul_v2", {"X": x, "Y": weight}, {"Out": out},
                     {"trans_x": False, "trans_y": False})
    bias = helper.create_parameter(bias_attr, [size], x.dtype, is_bias=True)
    if bias is None:
        return out
    biased = helper.create_tmp(x.dtype)
    helper.append_op("elementwise_add", {"X": out, "Y": bias}, {"Out": biased}, {"axis": -1})
    return biased
