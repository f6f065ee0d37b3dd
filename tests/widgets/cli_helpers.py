"""What the command-line tests share: running ``fluidscope`` (a new process or ``main``),
the error-line check, and small model files built with the designer or from descs."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import io as fio
from fluidscope.engine.ir import descs, paddle_ops, registry
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.widgets.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "io"
FC = DATA / "paddle_fc"  # x [-1, 4] -> fc(3) -> relu -> scale -> scale_0.tmp_0, by Paddle 3.3.1
FC_OUT = "scale_0.tmp_0"
VERBS = ["info", "render", "convert", "run", "lab"]
# Paddle ops fluidscope does not implement (the first still unimplemented is used)
UNIMPLEMENTED = ("anchor_generator", "yolo_box", "prior_box", "box_coder")


def cli(*args, cwd=None, timeout=300):
    """``fluidscope ARGS`` in a new process: (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "fluidscope.widgets.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def call(capsys, *args):
    """``main(ARGS)`` in this process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_user_error(code, err, *fragments):
    """Exit code 1 and one line on stderr holding every fragment, no traceback."""
    assert code == 1, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def classifier_design(path):
    """x[?, 4], label -> fc(8, relu) -> fc(3) -> softmax_with_cross_entropy -> mean, SGD."""
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 4])
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    h = d.add("fc", inputs={"input": x}, size=8, act="relu")
    o = d.add("fc", inputs={"input": h}, size=3)
    loss = d.add("softmax_with_cross_entropy", inputs={"logits": o, "label": label})
    d.set_loss(d.add("mean", inputs={"x": loss}))
    d.set_optimizer("SGD", learning_rate=0.1)
    d.save(path)
    return path


def two_input_model(prefix):
    """a[?, 3], b[?, 2] -> concat -> fc(2) -> (fc out, softmax of it): an inference model
    saved by fluidscope, with its startup-initialised weights; returns (feeds, outputs)
    computed here."""
    main_program, startup = fd.Program(), fd.Program()
    with fd.program_guard(main_program, startup):
        a = fd.data("a", [None, 3])
        b = fd.data("b", [None, 2])
        logits = fd.fc(fd.concat([a, b], axis=1), size=2)
        probs = fd.softmax(logits)
    scope = fd.Scope()
    exe = fd.Executor()
    exe.run(startup, scope=scope)
    feeds = {"a": np.arange(6, dtype="float32").reshape(2, 3),
             "b": np.ones((2, 2), "float32")}
    outs = exe.run(main_program, feed=feeds, fetch_list=[logits, probs], scope=scope)
    with fd.scope_guard(scope):
        fd.io.save_inference_model(str(prefix), [a, b], [logits, probs], exe,
                                   program=main_program)
    return feeds, dict(zip([logits.name, probs.name], outs))


def unimplemented_model(path):
    """x -> relu -> T -> fetch, T a Paddle op fluidscope does not implement."""
    found = [t for t in UNIMPLEMENTED if not registry.has(t) and paddle_ops.op_info(t)]
    if not found:
        pytest.skip(f"fluidscope now implements all of {UNIMPLEMENTED}; add candidates")
    op_type = found[0]
    desc = pb.ProgramDesc()
    block = desc.blocks.add(idx=0, parent_idx=-1)
    for name, kind in (("feed", pb.VarType.FEED_MINIBATCH), ("fetch", pb.VarType.FETCH_LIST)):
        block.vars.add(name=name, persistable=True).type.type = kind
    descs.add_var(block, "x", [-1, 4], pb.VarType.FP32, need_check_feed=True)
    descs.add_var(block, "r", [-1, 4], pb.VarType.FP32)
    descs.add_op(block, "feed", {"X": ["feed"]}, {"Out": ["x"]}, col=0)
    descs.add_op(block, "relu", {"X": ["x"]}, {"Out": ["r"]})
    info = paddle_ops.op_info(op_type)
    op = block.ops.add(type=op_type)
    for slot in info["inputs"]:
        if not slot.endswith("?"):
            op.inputs.add(parameter=slot.rstrip("[]?!"), arguments=["r"])
    outs = []
    for slot in info["outputs"]:
        outs.append(f"t.{slot.rstrip('[]?!').lower()}")
        descs.add_var(block, outs[-1], [-1, 4], pb.VarType.FP32)
        op.outputs.add(parameter=slot.rstrip("[]?!"), arguments=[outs[-1]])
    descs.add_op(block, "fetch", {"X": [outs[0]]}, {"Out": ["fetch"]}, col=0)
    fio.save_program(desc, path)
    return op_type
