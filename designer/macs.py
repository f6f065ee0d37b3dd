"""Multiply-accumulate counts of forward ops, from declared shapes (what ``summary`` adds up).

``op_macs(op, shape_of, attrs, sub_block_macs)`` counts one op. Unknown dims (``-1``: the
batch, or the rows of a batch of sequences) have already been replaced by the summary's
``batch_size`` in what ``shape_of`` returns. The rules, by op family:

* ``mul``, ``matmul``, ``matmul_v2``, ``bmm``: output size x the contracted size ``K``;
  ``dot``: the size of ``X``;
* ``conv2d``, ``conv3d``, ``depthwise_conv2d``, ``deformable_conv*``: output size x
  ``Filter`` size per output channel (``C_in / groups x kernel``); the transposed convs:
  *input* size x ``Filter`` size per input channel (each input value is scattered to
  ``C_out / groups x kernel`` outputs); ``sequence_conv``: output size x context rows;
* ``lstm``, ``gru`` (input already projected): rows x ``Weight`` size (the recurrent
  product per step); ``rnn``: rows (time x batch) x the size of every 2-D weight of
  ``WeightList`` (biases are additions, not MACs);
* ``lookup_table``, ``lookup_table_v2`` (embedding): 0, a gather;
* ``elementwise_*``: the output size (one operation per value);
* ``batch_norm``, ``layer_norm``, ``instance_norm``, ``group_norm``: 2 x the input size
  (normalise, then scale and shift);
* ``pool2d``, ``pool3d``, ``max_pool*_with_index``, ``lp_pool2d``: output size x window
  (the whole input plane for global pooling, ``ceil(in / out)`` per dim for adaptive);
  ``sequence_pool``: the input size;
* an op running a sub-block (``recurrent``, ``while``, ``conditional_block``): the MACs
  of one pass of that block's ops (one time step of the recurrent op: the number of
  steps is known only at run time);
* **any other op: 0**. Activations, reshapes, concatenations, reductions and casts move
  data or apply a non-linearity and do no multiply-accumulate; ``summary`` lists the
  types that met this rule in ``uncounted``, so a reader sees what was left out.
"""
from __future__ import annotations

import math

CONVS = {"conv2d", "conv3d", "depthwise_conv2d", "deformable_conv", "deformable_conv_v1"}
TRANSPOSED_CONVS = {"conv2d_transpose", "conv3d_transpose", "depthwise_conv2d_transpose"}
NORMS = {"batch_norm", "layer_norm", "instance_norm", "group_norm"}
POOLS = {"pool2d", "pool3d", "max_pool2d_with_index", "max_pool3d_with_index", "lp_pool2d"}
EMBEDDINGS = {"lookup_table", "lookup_table_v2"}
SUB_BLOCK_ATTRS = ("sub_block",)


def size(shape) -> int:
    return math.prod(shape) if shape is not None else 0


def counted(op_type) -> bool:
    """True when ``op_type`` has a rule of its own above (even one giving 0)."""
    return (op_type in CONVS or op_type in TRANSPOSED_CONVS or op_type in NORMS
            or op_type in POOLS or op_type in EMBEDDINGS or op_type.startswith("elementwise_")
            or op_type in ("mul", "matmul", "matmul_v2", "bmm", "dot", "sequence_conv",
                           "lstm", "gru", "rnn", "sequence_pool"))


def op_macs(op_type, shape_of, attrs, sub_block_macs=None) -> int:
    """MACs of one op. ``shape_of(slot, i=0)``: the shape (a tuple, unknown dims replaced)
    of the ``i``-th variable of input or output ``slot``, None when the slot is empty;
    ``attrs``: the op's parsed attributes; ``sub_block_macs``: MACs of one pass of the
    block the op runs, if it runs one."""
    if op_type in ("mul", "matmul", "matmul_v2", "bmm"):
        return size(shape_of("Out")) * _contracted(op_type, shape_of, attrs)
    if op_type == "dot":
        return size(shape_of("X"))
    if op_type in CONVS:
        return size(shape_of("Output")) * size(shape_of("Filter")[1:])
    if op_type in TRANSPOSED_CONVS:
        return size(shape_of("Input")) * size(shape_of("Filter")[1:])
    if op_type == "sequence_conv":
        return size(shape_of("Out")) * shape_of("Filter")[0]
    if op_type in ("lstm", "gru"):
        return shape_of("Input")[0] * size(shape_of("Weight"))
    if op_type == "rnn":
        steps = size(shape_of("Input")[:2])
        weights = 0
        i = 0
        while (shape := shape_of("WeightList", i)) is not None:
            weights += size(shape) if len(shape) == 2 else 0
            i += 1
        return steps * weights
    if op_type in EMBEDDINGS:
        return 0
    if op_type.startswith("elementwise_"):
        return size(shape_of("Out"))
    if op_type in NORMS:
        return 2 * size(shape_of("X"))
    if op_type in POOLS:
        return size(shape_of("Out")) * _window(shape_of("X"), shape_of("Out"), attrs)
    if op_type == "sequence_pool":
        return size(shape_of("X"))
    return sub_block_macs or 0


def _contracted(op_type, shape_of, attrs) -> int:
    """K, the length each output value sums over."""
    x, y = shape_of("X"), shape_of("Y")
    if op_type == "mul":
        return size(y[:attrs.get("y_num_col_dims", 1)])
    if op_type == "bmm":
        return x[-1]
    transpose = attrs.get("trans_x", attrs.get("transpose_X", False))
    if len(x) == 1:
        return x[0]
    return x[-2] if transpose else x[-1]


def _window(x, out, attrs) -> int:
    """Input values read per output value of a pooling op."""
    spatial = len(out) - 2
    channels_last = str(attrs.get("data_format", "NCHW")).endswith("C")
    in_dims = x[1:-1] if channels_last else x[2:]
    out_dims = out[1:-1] if channels_last else out[2:]
    if attrs.get("global_pooling", False):
        return size(in_dims)
    if attrs.get("adaptive", False):
        return math.prod(-(-i // max(o, 1)) for i, o in zip(in_dims, out_dims))
    kernel = list(attrs.get("ksize", attrs.get("kernel_size", [1] * spatial)))
    return size(kernel[:spatial])


__all__ = ["op_macs", "counted", "size", "SUB_BLOCK_ATTRS"]
