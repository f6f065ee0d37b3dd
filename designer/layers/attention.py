"""``multi_head_attention``: ``paddle.nn.MultiHeadAttention`` as one layer function.

A composite of registry ops, exactly as Paddle's layer computes it (checked against
Paddle 3.3.1's dygraph layer with the same weights in tests/designer/test_cnn_paddle.py):

    q, k, v = query Wq + bq, key Wk + bk, value Wv + bv        (matmul_v2 + elementwise_add)
    each -> [N, len, H, D] -> [N, H, len, D]                    (reshape2, transpose2; D = E / H)
    product = (q * D^-0.5) k^T  [N, H, L, S]                   (scale, matmul_v2 trans_y)
            + attn_mask                                          (bool/int masks: (m - 1) * 1e9)
    weights = softmax(product)  (then dropout, upscale_in_train, while training)
    out = (weights v) -> [N, L, H, D] -> [N, L, E], then out Wo + bo

Parameters, created in Paddle's order (q, k, v, out projections): ``<name>.w_0`` Wq
[E, E], ``<name>.b_0`` bq [E], ``w_1``/``b_1`` for keys ([kdim, E]), ``w_2``/``b_2`` for
values ([vdim, E]), ``w_3``/``b_3`` for the output; Xavier weights, zero biases.
"""
from fluidscope.engine.ir.dtypes import to_var_type

from ..layer_helper import LayerHelper
from ..layer_specs import layer_spec

__all__ = ["multi_head_attention"]


@layer_spec("attention", inputs={"query": "tensor", "key": "tensor?", "value": "tensor?",
                                 "attn_mask": "tensor?"},
            types={"num_heads": "int"}, outputs=("out", "weights?"))
def multi_head_attention(query, num_heads, key=None, value=None, attn_mask=None, dropout=0.0,
                         need_weights=False, is_test=False, param_attr=None, bias_attr=None,
                         name=None):
    """Multi-head scaled dot-product attention of ``query`` [N, L, E] over ``key``/``value``.

    ``key`` and ``value`` default to ``query`` (self-attention). ``attn_mask``
    broadcasts to [N, num_heads, L, S]: a float mask is added to the scores, a bool or
    int mask keeps where it is 1 (True) and blocks where 0. Returns out [N, L, E], and
    the attention weights [N, num_heads, L, S] too with ``need_weights``.
    ``dropout`` drops attention weights while training (not ``is_test``).
    """
    helper = LayerHelper("multi_head_attention", name)
    key = query if key is None else key
    value = query if value is None else value
    for slot, var in (("query", query), ("key", key), ("value", value)):
        if len(var.shape) != 3 or var.shape[2] < 0:
            raise helper.error(f"{slot} '{var.name}' has shape {list(var.shape)}; it must be "
                               "[batch, length, features] with known features")
    embed = query.shape[2]
    if not isinstance(num_heads, int) or isinstance(num_heads, bool) or num_heads <= 0 \
            or embed % num_heads:
        raise helper.error(f"num_heads={num_heads!r} must be a positive int dividing the "
                           f"query's {embed} features (shape {list(query.shape)})")
    if min(key.shape[1], value.shape[1]) >= 0 and key.shape[1] != value.shape[1]:
        raise helper.error(f"key '{key.name}' {list(key.shape)} and value '{value.name}' "
                           f"{list(value.shape)} must have the same length (dim 1)")
    if attn_mask is not None and not 2 <= len(attn_mask.shape) <= 4:
        raise helper.error(f"attn_mask '{attn_mask.name}' has shape {list(attn_mask.shape)}; "
                           "it must broadcast to [N, num_heads, L, S]")
    if not 0.0 <= dropout <= 1.0:
        raise helper.error(f"dropout must be in [0, 1], got {dropout!r}")
    head = embed // num_heads
    dtype = query.dtype
    q = _split_heads(helper, _linear(helper, query, embed, param_attr, bias_attr), num_heads, head)
    k = _split_heads(helper, _linear(helper, key, embed, param_attr, bias_attr), num_heads, head)
    v = _split_heads(helper, _linear(helper, value, embed, param_attr, bias_attr), num_heads, head)
    scaled = _op(helper, "scale", {"X": q}, {"scale": head ** -0.5, "bias": 0.0}, dtype)
    product = _op(helper, "matmul_v2", {"X": scaled, "Y": k}, {"trans_x": False, "trans_y": True},
                  dtype)
    if attn_mask is not None:
        product = _op(helper, "elementwise_add", {"X": product, "Y": _mask(helper, attn_mask,
                                                                            dtype)},
                      {"axis": -1}, dtype)
    weights = _op(helper, "softmax", {"X": product}, {"axis": -1}, dtype)
    if dropout:
        dropped = helper.create_tmp(dtype)
        helper.append_op("dropout", {"X": weights},
                         {"Out": dropped, "Mask": helper.create_tmp("uint8", stop_gradient=True)},
                         {"dropout_prob": float(dropout), "is_test": bool(is_test),
                          "dropout_implementation": "upscale_in_train"})
        weights_used = dropped
    else:
        weights_used = weights
    context = _op(helper, "matmul_v2", {"X": weights_used, "Y": v},
                  {"trans_x": False, "trans_y": False}, dtype)
    merged = _with_xshape(helper, "transpose2", context, {"axis": [0, 2, 1, 3]})
    merged = _with_xshape(helper, "reshape2", merged, {"shape": [0, 0, embed]})
    out = _linear(helper, merged, embed, param_attr, bias_attr)
    return (out, weights) if need_weights else out


def _op(helper, op_type, inputs, attrs, dtype):
    out = helper.create_tmp(dtype)
    helper.append_op(op_type, inputs, {"Out": out}, attrs)
    return out


def _with_xshape(helper, op_type, x, attrs):
    out = helper.create_tmp(x.dtype)
    helper.append_op(op_type, {"X": x}, {"Out": out,
                                         "XShape": helper.create_tmp(x.dtype, stop_gradient=True)},
                     attrs)
    return out


def _linear(helper, x, size, param_attr, bias_attr):
    """x [N, len, in] @ W [in, size] + b (Paddle's Linear: matmul_v2 + elementwise_add)."""
    weight = helper.create_parameter(param_attr, [x.shape[2], size], x.dtype)
    out = _op(helper, "matmul_v2", {"X": x, "Y": weight}, {"trans_x": False, "trans_y": False},
              x.dtype)
    bias = helper.create_parameter(bias_attr, [size], x.dtype, is_bias=True)
    if bias is None:
        return out
    return _op(helper, "elementwise_add", {"X": out, "Y": bias}, {"axis": -1}, x.dtype)


def _split_heads(helper, x, heads, head):
    """[N, len, E] -> [N, heads, len, head]."""
    x = _with_xshape(helper, "reshape2", x, {"shape": [0, 0, heads, head]})
    return _with_xshape(helper, "transpose2", x, {"axis": [0, 2, 1, 3]})


def _mask(helper, mask, dtype):
    """Paddle's _convert_attention_mask: bool/int -> (float(mask) - 1) * 1e9, so blocked
    positions get -1e9 before the softmax; a float mask of another dtype is cast."""
    if mask.dtype == dtype:
        return mask
    cast = _op(helper, "cast", {"X": mask}, {"in_dtype": to_var_type(mask.dtype),
                                             "out_dtype": to_var_type(dtype)}, dtype)
    if mask.dtype.startswith(("float", "bfloat")):
        return cast
    return _op(helper, "scale", {"X": cast},
               {"scale": 1e9, "bias": -1.0, "bias_after_scale": False}, dtype)
