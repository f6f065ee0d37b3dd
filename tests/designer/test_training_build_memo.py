"""The training part of a design build reuses what did not change (issue #16 item 3).

The backward keeps the grad ops of each forward op by the op's bytes
(engine/autodiff/backward.py) and the optimizer keeps each update op by its slots'
descs, attributes, role, name scope and source line (designer/optimizer.py). Checked:
a training build after edits, with the memos warm, is byte for byte the build made
with both memos empty; an edit sends only the update ops of the parameters it changed
through ``append_op``; control-flow grad makers (a recurrent group) still work.
"""
import pytest

import fluidscope.designer as fd
from fluidscope.designer import framework, optimizer
from fluidscope.designer.design.build import build
from fluidscope.engine.autodiff import backward

from design_models import char_lstm, composites


def chain(kind, layers=6, width=8):
    d = fd.Design()
    h = d.add("data", name="x", shape=[None, width])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    for _ in range(layers):
        h = d.add("fc", inputs={"input": h}, size=width, act="relu")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": h, "label": label})
    d.set_loss(d.add("mean", inputs={"x": cost}))
    d.set_optimizer(kind, learning_rate=0.1)
    return d


def without_memos(doc):
    """A build of ``doc`` with no node cache and both memos empty (then empty again, so
    the warm memos of the next check come from the cached builds only)."""
    backward.clear_memo()
    optimizer.clear_update_memo()
    try:
        return build(doc, fd.Scope(), True)
    finally:
        backward.clear_memo()
        optimizer.clear_update_memo()


def same_bytes(cached, fresh):
    assert cached.main.desc.SerializeToString() == fresh.main.desc.SerializeToString()
    assert cached.startup.desc.SerializeToString() == fresh.startup.desc.SerializeToString()


@pytest.mark.parametrize("kind", ["SGD", "Momentum", "Adam"])
def test_training_builds_after_edits_equal_builds_without_memos(kind):
    d = chain(kind)
    edits = [lambda: None, lambda: d.set("fc_3", size=12), lambda: d.set("fc_0", act="tanh"),
             lambda: d.undo(), lambda: d.set("fc_5", size=5), lambda: d.rename("fc_2", "mid")]
    for edit in edits:
        edit()
        d.build(scope=fd.Scope())  # warms the memos with this design
        cached = d.build(scope=fd.Scope())
        assert cached.ok
        same_bytes(cached, without_memos(d.document))


@pytest.mark.parametrize("design", [composites, char_lstm], ids=["composites", "char_lstm"])
def test_designs_with_recurrent_groups_build_the_same_bytes(design):
    d = design()
    d.build(scope=fd.Scope())
    same_bytes(d.build(scope=fd.Scope()), without_memos(d.document))


def test_an_edit_sends_only_the_changed_parameters_update_ops_through_append_op(monkeypatch):
    d = chain("Momentum")
    d.build(scope=fd.Scope())
    appended = []
    real = framework.Block.append_op

    def counting(self, type, *args, **kwargs):
        if type == "momentum":
            appended.append(kwargs.get("inputs", args[0] if args else None)["Param"].name)
        return real(self, type, *args, **kwargs)
    monkeypatch.setattr(framework.Block, "append_op", counting)
    d.build(scope=fd.Scope())
    assert appended == []  # nothing changed: every update op is reused
    d.set("fc_3", size=12)  # fc_3's weight and bias, and fc_4's weight change shape
    d.build(scope=fd.Scope())
    assert sorted(appended) == ["fc_3.b_0", "fc_3.w_0", "fc_4.w_0"]


def test_a_source_line_is_part_of_the_key():
    # Outside a design build an update op records the user's line: the same op appended
    # from two lines must carry two different callstacks.
    def program():
        main, startup = fd.Program(), fd.Program()
        with fd.program_guard(main, startup), fd.unique_name.guard():
            x = fd.data("x", [None, 3])
            loss = fd.mean(fd.fc(x, 2))
        return main, startup, loss
    main1, startup1, loss1 = program()
    with fd.program_guard(main1, startup1), fd.unique_name.guard():
        fd.optimizer.SGD(0.1).minimize(loss1)
    main2, startup2, loss2 = program()
    with fd.program_guard(main2, startup2), fd.unique_name.guard():
        fd.optimizer.SGD(0.1).minimize(loss2)
    stacks = [[op.attr("op_callstack") for op in m.global_block().ops if op.type == "sgd"]
              for m in (main1, main2)]
    assert stacks[0] and stacks[0] != stacks[1]
