"""``multi_head_attention`` (a composite of about 25 ops, all under the layer's name) read
back from a file as one layer node (design/lift.py, lift_read.py): self- and
cross-attention, a bool mask (cast + scale), dropout, the weights as a second output,
no biases; each rebuilds its bytes and its numbers. (Paddle 3.3.1's MultiHeadAttention
does not build in the legacy static mode that writes .pdmodel files, so there is no
Paddle-saved attention to read.)"""
import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import Executor, Scope

from design_models import program_bytes


def plain(program):
    """``program`` as a file holds it: ops and variables, no record of layer calls."""
    return fd.Program.from_desc(type(program.desc).FromString(program.desc.SerializeToString()))


def self_attention():
    q = fd.data("q", [None, 5, 8])
    # without dropout, is_test changes no op: nothing to read it from, nothing lost
    return {"q": [2, 5, 8]}, [fd.multi_head_attention(q, 2, is_test=True)], \
        ({"query": "q"}, {"num_heads": 2})


def masked_cross_attention():
    q, k = fd.data("q", [None, 5, 8]), fd.data("k", [None, 4, 6])
    m = fd.data("m", [None, 1, 5, 4], "bool")
    out, weights = fd.multi_head_attention(q, 4, key=k, value=k, attn_mask=m, dropout=0.25,
                                           is_test=True, need_weights=True)
    return {"q": [2, 5, 8], "k": [2, 4, 6], "m": [2, 1, 5, 4]}, [out, weights], (
        {"query": "q", "key": "k", "value": "k", "attn_mask": "m"},
        {"num_heads": 4, "dropout": 0.25, "is_test": True})  # no op reads the weights


def float_mask_without_bias():
    q = fd.data("q", [None, 3, 4])
    m = fd.data("m", [None, 2, 3, 3])
    return {"q": [2, 3, 4], "m": [2, 2, 3, 3]}, [
        fd.relu(fd.multi_head_attention(q, 2, attn_mask=m, bias_attr=False))], (
        {"query": "q", "attn_mask": "m"}, {"num_heads": 2, "bias_attr": False})


@pytest.mark.parametrize("model", [self_attention, masked_cross_attention,
                                   float_mask_without_bias])
def test_attention_reads_back_as_one_layer_node_and_rebuilds_its_bytes_and_numbers(model):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        shapes, fetch, (inputs, attrs) = model()
    program = plain(main)
    d = fd.Design.from_program(program, layers=True)
    node = d.node("multi_head_attention_0")
    assert node.layer == "multi_head_attention" and node.attrs == attrs
    assert {slot: ref.node for slot, ref in node.inputs.items()} == inputs
    assert {n.layer for n in d.nodes.values()} <= {"variable", "multi_head_attention", "relu"}
    built = d.build(scope=Scope(), optimize=False)
    assert built.errors == {} and program_bytes(built.main) == program_bytes(program)
    scope = Scope()
    exe = Executor()
    exe.run(startup.desc, scope=scope)
    rng = np.random.default_rng(0)
    feed = {name: (rng.random(shape) > 0.3 if name == "m" and len(inputs) > 2
                   else rng.standard_normal(shape).astype("float32"))
            for name, shape in shapes.items()}
    names = [v.name for v in fetch]
    expected = exe.run(program.desc, feed=feed, fetch_list=names, scope=scope)
    got = exe.run(built.main.desc, feed=feed, fetch_list=names, scope=scope)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_attention_weights_another_op_reads_are_the_layers_second_output():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()), fd.unique_name.guard():
        q = fd.data("q", [None, 5, 8])
        out, weights = fd.multi_head_attention(q, 2, need_weights=True)
        fd.mean(weights)
    d = fd.Design.from_program(plain(main), layers=True)
    assert d.node("multi_head_attention_0").attrs == {"num_heads": 2, "need_weights": True}
    assert d.node("mean_0").inputs["X"] == [fd.design.Ref("multi_head_attention_0", 1)]
