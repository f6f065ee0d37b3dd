"""Layers with parameters: ``fc``, ``embedding``; and ``dropout``."""
import math

from fluidscope.engine.errors import DesignError

from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper


@layer_spec("nn", inputs={"input": "tensor+"}, types={"size": "int"})
def fc(input, size, num_flatten_dims=1, act=None, param_attr=None, bias_attr=None, name=None):
    """Fully connected: out = act(sum_i flatten(input_i) @ W_i + b).

    input: a Variable or a list of them; each is flattened to 2-D at
    ``num_flatten_dims`` (dims before it are batch dims) and gets its own weight
    ``[prod(shape[num_flatten_dims:]), size]``. bias_attr False: no bias.
    Lowers to ``mul`` (+ ``sum``) + ``elementwise_add`` (+ the activation op), all
    recorded under this layer's name in ``op_namescope``.
    """
    helper = LayerHelper("fc", name)
    inputs = input if isinstance(input, (list, tuple)) else [input]
    if not inputs:
        raise DesignError(f"fc layer '{helper.name}': input is empty")
    if not isinstance(size, int) or size <= 0:
        raise DesignError(f"fc layer '{helper.name}': size must be a positive int, got {size!r}")
    attrs = param_attr if isinstance(param_attr, (list, tuple)) else [param_attr] * len(inputs)
    products = []
    for x, attr in zip(inputs, attrs):
        if len(x.shape) <= num_flatten_dims:
            raise DesignError(
                f"fc layer '{helper.name}': input '{x.name}' has shape {list(x.shape)}, which has "
                f"no dims after num_flatten_dims={num_flatten_dims}")
        in_dims = x.shape[num_flatten_dims:]
        if any(d < 0 for d in in_dims):
            raise DesignError(
                f"fc layer '{helper.name}': input '{x.name}' shape {list(x.shape)} must be known "
                f"after dim {num_flatten_dims - 1} to size the weight")
        x_dtype = x.dtype
        w = helper.create_parameter(attr, [math.prod(in_dims), size], x_dtype)
        out = helper.create_tmp(x_dtype)
        helper.append_op("mul", {"X": x, "Y": w}, {"Out": out},
                         {"x_num_col_dims": num_flatten_dims, "y_num_col_dims": 1})
        products.append(out)
    pre_bias = products[0]
    dtype = inputs[0].dtype  # read once: a dtype's name is slow to look up
    if len(products) > 1:
        pre_bias = helper.create_tmp(dtype)
        helper.append_op("sum", {"X": products}, {"Out": pre_bias})
    bias = helper.create_parameter(bias_attr, [size], dtype, is_bias=True)
    pre_act = pre_bias
    if bias is not None:
        pre_act = helper.create_tmp(dtype)
        helper.append_op("elementwise_add", {"X": pre_bias, "Y": bias}, {"Out": pre_act},
                         {"axis": num_flatten_dims})
    return helper.append_activation(pre_act, act)


@layer_spec("nn", inputs={"input": "ids"}, types={"size": "ints", "padding_idx": "int"})
def embedding(input, size, is_sparse=False, padding_idx=None, param_attr=None,
              dtype="float32", name=None):
    """Look up rows of a ``size = [vocab, dim]`` table for int64 ids (``lookup_table_v2``).

    Output shape is ``input.shape + [dim]``; LoD of the ids is kept. ``padding_idx``
    rows give zeros and receive no gradient (negative counts from the end).
    """
    helper = LayerHelper("embedding", name)
    if len(size) != 2 or any(not isinstance(d, int) or d <= 0 for d in size):
        raise DesignError(f"embedding layer '{helper.name}': size must be [vocab, dim], got {size!r}")
    if input.dtype not in ("int64", "int32"):
        raise DesignError(
            f"embedding layer '{helper.name}': ids '{input.name}' must be int64, got {input.dtype}")
    w = helper.create_parameter(param_attr, list(size), dtype)
    pad = -1 if padding_idx is None else (padding_idx if padding_idx >= 0 else size[0] + padding_idx)
    out = helper.create_tmp(dtype, lod_level=input.lod_level)
    helper.append_op("lookup_table_v2", {"Ids": input, "W": w}, {"Out": out}, {"padding_idx": pad})
    return out


@layer_spec("nn", inputs={"x": "tensor"}, types={"dropout_prob": "float", "seed": "int"},
            choices={"dropout_implementation": ("downgrade_in_infer", "upscale_in_train")})
def dropout(x, dropout_prob, is_test=False, seed=None,
            dropout_implementation="downgrade_in_infer", name=None):
    """Randomly zero elements with probability ``dropout_prob`` while training."""
    helper = LayerHelper("dropout", name)
    out = helper.create_tmp(x.dtype)
    mask = helper.create_tmp("uint8", stop_gradient=True)
    helper.append_op("dropout", {"X": x}, {"Out": out, "Mask": mask},
                     {"dropout_prob": float(dropout_prob), "is_test": is_test,
                      "dropout_implementation": dropout_implementation})
    return out
