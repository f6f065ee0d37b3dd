"""Losses and metrics."""
from fluidscope.engine.errors import DesignError

from ..layer_specs import layer_spec
from ..layer_helper import LayerHelper


@layer_spec("loss", inputs={"input": "tensor", "label": "tensor"})
def square_error_cost(input, label, name=None):
    """(input - label)^2 element-wise (``elementwise_sub`` + ``square``)."""
    helper = LayerHelper("square_error_cost", name)
    diff = helper.create_tmp(input.dtype)
    helper.append_op("elementwise_sub", {"X": input, "Y": label}, {"Out": diff})
    out = helper.create_tmp(input.dtype)
    helper.append_op("square", {"X": diff}, {"Out": out})
    return out


@layer_spec("loss", inputs={"input": "tensor", "label": "ids"})
def cross_entropy(input, label, soft_label=False, ignore_index=-100, name=None):
    """-log(input[label]) per row for probabilities ``input`` [N, C] and int64 ``label``
    [N, 1] (``cross_entropy2``). Returns [N, 1]."""
    if soft_label:
        raise DesignError("cross_entropy: soft labels are taken by softmax_with_cross_entropy(soft_label=True)")
    helper = LayerHelper("cross_entropy", name)
    out = helper.create_tmp(input.dtype)
    xshape = helper.create_tmp(input.dtype, stop_gradient=True)
    match = helper.create_tmp(input.dtype, stop_gradient=True)
    helper.append_op("cross_entropy2", {"X": input, "Label": label},
                     {"Y": out, "XShape": xshape, "MatchX": match}, {"ignore_index": ignore_index})
    return out


@layer_spec("loss", inputs={"logits": "tensor", "label": "tensor"}, outputs=("loss", "softmax?"))
def softmax_with_cross_entropy(logits, label, soft_label=False, ignore_index=-100,
                               numeric_stable_mode=True, return_softmax=False, axis=-1, name=None):
    """Softmax over ``axis`` then cross entropy with ``label``, fused and stable.

    Returns the loss [N, 1] (and the softmax when ``return_softmax``)."""
    helper = LayerHelper("softmax_with_cross_entropy", name)
    softmax = helper.create_tmp(logits.dtype)
    loss = helper.create_tmp(logits.dtype)
    helper.append_op("softmax_with_cross_entropy", {"Logits": logits, "Label": label},
                     {"Softmax": softmax, "Loss": loss},
                     {"soft_label": soft_label, "ignore_index": ignore_index,
                      "numeric_stable_mode": numeric_stable_mode, "axis": axis})
    return (loss, softmax) if return_softmax else loss


@layer_spec("metric", inputs={"input": "tensor", "label": "ids", "correct": "tensor?",
                              "total": "tensor?"}, outputs=("accuracy",))
def accuracy(input, label, k=1, correct=None, total=None, name=None):
    """Top-k accuracy of scores ``input`` [N, C] against int64 ``label`` [N, 1]."""
    helper = LayerHelper("accuracy", name)
    values = helper.create_tmp(input.dtype, stop_gradient=True)
    indices = helper.create_tmp("int64", stop_gradient=True)
    helper.append_op("top_k_v2", {"X": input}, {"Out": values, "Indices": indices}, {"k": k})
    acc = helper.create_tmp("float32", stop_gradient=True)
    correct = correct or helper.create_tmp("int32", stop_gradient=True)
    total = total or helper.create_tmp("int32", stop_gradient=True)
    helper.append_op("accuracy", {"Out": values, "Indices": indices, "Label": label},
                     {"Accuracy": acc, "Correct": correct, "Total": total})
    return acc
