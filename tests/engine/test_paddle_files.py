"""Paddle's files as they are in the wild (issue #14): extra attributes, ops fluidscope does
not implement, PIR programs.

* Paddle writes runtime-only "extra" attributes (use_cudnn, use_mkldnn, is_test on
  conv2d...) into its files: they load, run (ignored) and survive a re-save byte for byte;
  a genuinely unknown attribute is still refused.
* A program holding Paddle ops fluidscope does not implement loads, renders to DOT,
  becomes a design that rebuilds it, saves again; running or debugging it raises one
  error naming every missing op type with its count, before any op runs.
* A Paddle 3 PIR program (``model.json``) gets an error saying how to save the legacy
  format. ``data/io/pir/model.*`` was written by paddlepaddle 3.3.1 with its default
  ``FLAGS_enable_pir_api=1``: ``paddle.static.save_inference_model`` of x[-1, 2] -> fc(1).

Where ``.venv-paddle`` exists, Paddle itself reads both kinds of file back (same ops, slots
and attribute values, Paddle's extra attribute types).

The unimplemented ops are picked from real Paddle op names the registry lacks, and
their slots and attribute types come from Paddle's data (``engine/ir/paddle_ops.json``),
so the tests keep working as kernels are added.
"""
import json
import os
import re

import numpy as np
import pytest

import fluidscope.designer as fd
from data.io.programs import HERE, add_var, fc_program, fc_scope
from fluidscope.designer.design.edits import Design
from fluidscope.engine import Executor
from fluidscope.engine import io as fio
from fluidscope.engine.errors import LoadError, SchemaError
from fluidscope.engine.ir import descs, paddle_ops, registry
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import AttrType
from fluidscope.engine.runtime.scope import Scope
from fluidscope.widgets.render.dot import program_to_dot
from paddle_oracle import needs_paddle, run_paddle

PIR_DIR = HERE / "pir"
CANDIDATES = ("yolo_box", "roi_align", "deformable_conv", "prior_box", "generate_proposals",
              "density_prior_box", "anchor_generator", "box_coder")


# ----------------------------------------------------------------- data file
def test_the_paddle_op_data_file_is_well_formed():
    text = open(paddle_ops.DATA_FILE, encoding="utf-8").read()
    data = json.loads(text)
    assert data["format"] == paddle_ops.FORMAT and data["paddle_version"] == "3.3.1"
    assert len(text) < 256 * 1024, "keep the data file small"
    ops = data["ops"]
    assert len(ops) > 1000 and list(ops) == sorted(ops)
    lines = text.splitlines()
    op_lines = lines[lines.index('"ops": {') + 1:-1]
    assert len(op_lines) == len(ops), "one op per line, so a regenerated file diffs well"
    names = set(AttrType.keys())
    for op_type, entry in ops.items():
        assert set(entry) <= {"inputs", "outputs", "attrs", "extra"}, op_type
        assert set(entry.get("attrs", {}).values()) <= names, op_type
        for type_name, _default in entry.get("extra", {}).values():
            assert type_name in names, op_type
        for slot in entry.get("inputs", []) + entry.get("outputs", []):
            assert re.fullmatch(r"[\w@-]+(\[\])?\??!?", slot), (op_type, slot)
    assert set(data["common_attrs"]) == set(registry.COMMON_ATTR_NAMES)
    # the extras the issue names, and gradient ops
    assert {"use_cudnn", "data_format"} <= set(ops["sequence_softmax"]["extra"])
    assert {"use_cudnn", "use_mkldnn", "workspace_size_MB", "exhaustive_search"} <= \
        set(ops["conv2d"]["extra"])
    assert {"fix_seed", "seed"} <= set(ops["dropout"]["extra"])
    assert "conv2d_grad" in ops and "yolo_box" in ops and "shape" in ops


def test_the_generator_script_is_committed_next_to_its_output():
    script = HERE.parents[2] / "scripts" / "gen_paddle_op_data.py"
    source = script.read_text()
    assert "get_op_extra_attrs" in source and "paddle_ops.json" in source


# ----------------------------------------------------------- extra attributes
def _with_extras(desc):
    """fc_program with the extra attributes Paddle writes, typed as Paddle types them."""
    for op in desc.blocks[0].ops:
        for name, (attr_type, default) in sorted(paddle_ops.extra_attrs(op.type).items()):
            if name not in registry.get(op.type).attr_by_name:
                descs.set_attr(op, name, attr_type, default)
    return desc


def test_extra_attributes_load_run_and_round_trip_byte_for_byte(tmp_path):
    desc = _with_extras(fc_program())
    extras = {a.name for op in desc.blocks[0].ops for a in op.attrs} - \
        {a.name for op in fc_program().blocks[0].ops for a in op.attrs}
    assert {"use_mkldnn", "use_onednn"} <= extras
    path = tmp_path / "extra.pdmodel"
    fio.save_program(desc, path)
    loaded = fio.load_program(path)
    assert loaded == desc
    fio.save_program(loaded, tmp_path / "again.pdmodel")
    assert (tmp_path / "again.pdmodel").read_bytes() == path.read_bytes()
    x = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    plain = Executor().run(fc_program(), feed={"x": x}, fetch_list=["out"], scope=fc_scope())
    extra = Executor().run(loaded, feed={"x": x}, fetch_list=["out"], scope=fc_scope())
    np.testing.assert_array_equal(plain[0], extra[0])


def test_a_design_of_a_program_with_extra_attributes_keeps_them():
    desc = _with_extras(fc_program())
    built = Design.from_program(fd.Program.from_desc(desc)).build(scope=fd.Scope())
    assert built.ok, built.errors
    assert [op for op in built.main.desc.blocks[0].ops] == list(desc.blocks[0].ops)


def test_the_registry_accepts_paddles_extra_attributes_of_that_op_type_only():
    softmax = registry.get("sequence_softmax")
    parsed = softmax.parse_attrs({"use_cudnn": False, "data_format": "AnyLayout"})
    assert parsed["use_cudnn"] is False
    spec = softmax.attr_spec("use_cudnn")
    assert spec.extra and spec.type == AttrType.BOOLEAN
    assert registry.get("conv2d").attr_spec("workspace_size_MB").type == AttrType.INT
    assert registry.get("conv2d_grad").attr_spec("use_cudnn").extra  # grad ops too
    with pytest.raises(SchemaError, match="unknown attribute 'use_cudnnn'"):
        softmax.parse_attrs({"use_cudnnn": False})
    with pytest.raises(SchemaError, match="unknown attribute 'workspace_size_MB'"):
        softmax.parse_attrs({"workspace_size_MB": 512})  # conv2d's, not this op's
    with pytest.raises(SchemaError, match="'use_cudnn' .*expected a bool"):
        softmax.parse_attrs({"use_cudnn": "yes"})


def test_a_file_with_an_unknown_attribute_is_still_refused(tmp_path):
    desc = fc_program()
    descs.set_attr(desc.blocks[0].ops[2], "use_cudnnn", AttrType.BOOLEAN, True)
    path = tmp_path / "bad.pdmodel"
    fio.save_program(desc, path, validate=False)
    with pytest.raises(LoadError, match=r"op #2 \(relu\): unknown attribute 'use_cudnnn'"):
        fio.load_program(path)


def test_the_designer_writes_an_extra_attribute_with_paddles_type():
    main = fd.Program()
    with fd.program_guard(main, fd.Program()):
        x = fd.layers.data("x", shape=[4])
        block = main.global_block()
        out = block.create_var(name="y", shape=[-1, 4], dtype="float32")
        op = block.append_op("relu", inputs={"X": [x]}, outputs={"Out": [out]},
                             attrs={"use_mkldnn": False})
    attr = next(a for a in op.desc.attrs if a.name == "use_mkldnn")
    assert attr.type == AttrType.BOOLEAN and attr.b is False
    assert op.attr("use_onednn") is False  # Paddle's default of an extra not given


# ------------------------------------------------------------ unimplemented ops
def _unimplemented(n):
    found = [t for t in CANDIDATES if not registry.has(t) and paddle_ops.op_info(t)]
    if len(found) < n:
        pytest.skip(f"fewer than {n} of {CANDIDATES} are still unimplemented; add candidates")
    return found[:n]


def _add_paddle_op(block, op_type, source, tag):
    """An ``op_type`` op reading ``source`` in every non-dispensable input and writing new
    vars, with one declared attribute of each op set (typed as Paddle types it)."""
    info = paddle_ops.op_info(op_type)
    op = block.ops.add(type=op_type)
    for slot in info["inputs"]:
        if not slot.endswith("?"):
            op.inputs.add(parameter=slot.rstrip("[]?!"), arguments=[source])
    outs = []
    for slot in info["outputs"]:
        name = f"{tag}.{slot.rstrip('[]?!').lower()}"
        add_var(block, name, [-1, 4])
        op.outputs.add(parameter=slot.rstrip("[]?!"), arguments=[name])
        outs.append(name)
    name, type_name = sorted(info["attrs"].items())[0]
    value = {"INT": 1, "FLOAT": 0.5, "BOOLEAN": True, "INTS": [1, 2], "FLOATS": [0.5],
             "STRING": "s", "STRINGS": ["s"], "LONG": 1}[type_name]
    registry.attr_to_proto(name, AttrType.Value(type_name), value, op.attrs.add())
    descs.set_attr(op, "op_role", AttrType.INT, 0)
    return outs[0]


def unimplemented_program():
    """x -> relu -> A -> relu -> A -> B -> relu: two ops of type A, one of B (A, B are
    Paddle ops fluidscope does not implement), feed and fetch included."""
    a, b = _unimplemented(2)
    desc = pb.ProgramDesc()
    block = desc.blocks.add(idx=0, parent_idx=-1)
    for name, kind in (("feed", pb.VarType.FEED_MINIBATCH), ("fetch", pb.VarType.FETCH_LIST)):
        v = block.vars.add(name=name, persistable=True)
        v.type.type = kind
    add_var(block, "x", [-1, 4])
    descs.add_op(block, "feed", {"X": ["feed"]}, {"Out": ["x"]}, col=0)
    add_var(block, "r0", [-1, 4])
    descs.add_op(block, "relu", {"X": ["x"]}, {"Out": ["r0"]})
    out = _add_paddle_op(block, a, "r0", "a0")
    add_var(block, "r1", [-1, 4])
    descs.add_op(block, "relu", {"X": [out]}, {"Out": ["r1"]})
    out = _add_paddle_op(block, a, "r1", "a1")
    out = _add_paddle_op(block, b, out, "b0")
    add_var(block, "y", [-1, 4])
    descs.add_op(block, "relu", {"X": [out]}, {"Out": ["y"]})
    descs.add_op(block, "fetch", {"X": ["y"]}, {"Out": ["fetch"]}, col=0)
    return desc, a, b


def test_a_program_with_unimplemented_ops_loads_renders_and_round_trips(tmp_path):
    desc, a, b = unimplemented_program()
    path = tmp_path / "model.pdmodel"
    fio.save_program(desc, path)
    loaded = fio.load_program(path)
    assert loaded == desc
    program, feeds, fetches = fd.io.load_inference_model(str(tmp_path / "model"))
    assert feeds == ["x"] and [v.name for v in fetches] == ["y"]
    dot = program_to_dot(program)
    assert a in dot and b in dot and "r1" in dot
    fio.save_program(program.desc, tmp_path / "again.pdmodel")
    assert (tmp_path / "again.pdmodel").read_bytes() == path.read_bytes()


def test_a_program_with_unimplemented_ops_becomes_a_design_that_rebuilds_it():
    desc, a, b = unimplemented_program()
    design = Design.from_program(fd.Program.from_desc(desc))
    types = [n.attrs.get("type") for n in design.nodes.values() if n.layer == "op"]
    assert types.count(a) == 2 and types.count(b) == 1
    built = design.build(scope=fd.Scope())
    assert built.ok, built.errors
    assert _same_block(built.main.desc.blocks[0], desc.blocks[0])
    assert Design.from_json(design.to_json()).build(scope=fd.Scope()).ok
    namespace = {}  # our own generated script
    exec(compile(design.to_python(), "generated.py", "exec"), namespace)  # noqa: S102
    assert _same_block(namespace["main_program"].desc.blocks[0], desc.blocks[0])


def _same_block(got, want):
    """The same ops, and the same variables (a design declares the fetch holder where the
    fetch op writes it, after the ops)."""
    return list(got.ops) == list(want.ops) and \
        sorted(v.SerializeToString() for v in got.vars) == \
        sorted(v.SerializeToString() for v in want.vars)


def test_running_a_program_with_unimplemented_ops_names_them_all_in_one_line():
    desc, a, b = unimplemented_program()
    x = {"x": np.ones((2, 4), "float32")}
    want = f"fluidscope does not implement: {a} (2x), {b} (1x)"
    for start in (lambda exe: exe.run(desc, feed=x, scope=Scope()),
                  lambda exe: exe.debug(desc, feed=x, scope=Scope())):
        with pytest.raises(paddle_ops.UnimplementedOpError) as info:
            start(Executor())
        assert str(info.value) == want
        assert info.value.counts == {a: 2, b: 1}
        assert isinstance(info.value, SchemaError)


def test_the_message_orders_by_count_and_marks_a_type_paddle_lacks():
    message = paddle_ops.unimplemented_message({"yolo_box": 1, "reul": 1, "roi_align": 3})
    assert message == ("fluidscope does not implement: roi_align (3x), reul (1x, not a Paddle "
                       "op either), yolo_box (1x)")
    assert paddle_ops.unimplemented_error([]) is None


def test_a_loaded_model_with_unimplemented_ops_fails_before_running_any_op(tmp_path):
    desc, a, _ = unimplemented_program()
    fio.save_program(desc, tmp_path / "model.pdmodel")
    program, _, fetches = fd.io.load_inference_model(str(tmp_path / "model"))
    scope = Scope()
    with pytest.raises(SchemaError, match=f"^fluidscope does not implement: {a} \\(2x\\)"):
        Executor().run(program, feed={"x": np.ones((2, 4), "float32")},
                       fetch_list=fetches, scope=scope)
    assert scope.find_var("r0") is None  # the first relu never ran


def test_a_paddle_op_name_gets_no_did_you_mean_and_a_typo_does():
    (a,) = _unimplemented(1)
    with pytest.raises(SchemaError) as info:
        registry.get(a)
    assert str(info.value) == (f"op type '{a}' is a PaddlePaddle 3.3.1 op that fluidscope "
                               "does not implement")
    if not registry.has("shape"):
        with pytest.raises(SchemaError, match="does not implement") as info:
            registry.get("shape")
        assert "did you mean" not in str(info.value)
    with pytest.raises(SchemaError, match=r"unknown op type 'reshap2'; did you mean reshape2"):
        registry.get("reshap2")


def test_a_file_with_an_op_type_paddle_lacks_is_still_refused(tmp_path):
    desc = fc_program()
    desc.blocks[0].ops[2].type = "reul"
    fio.save_program(desc, tmp_path / "typo.pdmodel", validate=False)
    with pytest.raises(LoadError, match="unknown op type 'reul'; did you mean relu"):
        fio.load_program(tmp_path / "typo.pdmodel")


def test_an_unimplemented_op_with_a_slot_paddle_lacks_is_refused(tmp_path):
    desc, a, _ = unimplemented_program()
    op = next(op for op in desc.blocks[0].ops if op.type == a)
    op.inputs[0].parameter = "Nope"
    fio.save_program(desc, tmp_path / "bad.pdmodel", validate=False)
    with pytest.raises(LoadError, match=f"unknown input slot 'Nope'; Paddle's {a} has"):
        fio.load_program(tmp_path / "bad.pdmodel")


# --------------------------------------------------------------------- PIR
def test_the_pir_sample_is_a_real_paddle_pir_program():
    data = (PIR_DIR / "model.json").read_bytes()
    assert len(data) < 20 * 1024
    loaded = json.loads(data)
    assert loaded["base_code"]["magic"] == "pir" and "program" in loaded
    assert fio.pir.pir_version(data) == loaded["base_code"]["version"]
    assert fio.pir.pir_version(fc_program().SerializeToString()) is None
    assert fio.pir.pir_version(b'{"program": 1}') is None


@pytest.mark.parametrize("how", ["json", "prefix", "pdmodel_path", "renamed"])
def test_a_pir_program_gets_the_error_saying_how_to_save_the_legacy_format(tmp_path, how):
    if how == "json":
        call = lambda: fio.load_program(PIR_DIR / "model.json")  # noqa: E731
    elif how == "prefix":
        call = lambda: fio.load_inference_model_files(PIR_DIR / "model", Scope())  # noqa: E731
    elif how == "pdmodel_path":
        call = lambda: fd.io.load_program(str(PIR_DIR / "model.pdmodel"))  # noqa: E731
    else:
        (tmp_path / "m.pdmodel").write_bytes((PIR_DIR / "model.json").read_bytes())
        call = lambda: fio.load_program(tmp_path / "m.pdmodel")  # noqa: E731
    with pytest.raises(LoadError) as info:
        call()
    message = str(info.value)
    assert "PIR program" in message and "model.json" in message or how == "renamed"
    assert "FLAGS_enable_pir_api=0" in message and "OldIrGuard" in message
    assert "set_flags({'FLAGS_enable_pir_api': False})" in message


def test_a_missing_pdmodel_without_a_pir_file_is_a_plain_read_error(tmp_path):
    with pytest.raises(LoadError, match="cannot read") as info:
        fio.load_program(tmp_path / "none.pdmodel")
    assert "PIR" not in str(info.value)
    (tmp_path / "none.json").write_text('{"a": 1}')
    with pytest.raises(LoadError, match="cannot read"):
        fio.load_program(tmp_path / "none.pdmodel")
    assert os.path.exists(tmp_path / "none.json")


def test_inference_pruning_and_for_test_clones_set_is_test_on_unimplemented_ops(tmp_path):
    with_is_test = [t for t in paddle_ops.op_types() if paddle_ops.declares(t, "is_test")
                    and not registry.has(t) and paddle_ops.op_info(t).get("inputs")
                    and paddle_ops.op_info(t).get("outputs")]
    if not with_is_test:
        pytest.skip("every Paddle op with is_test is implemented")
    desc, a, _ = unimplemented_program()
    block = desc.blocks[0]
    fetch = block.ops.pop()  # fetch what the op with is_test computes
    out = _add_paddle_op(block, with_is_test[0], "y", "t0")
    fetch.inputs[0].arguments[:] = [out]
    block.ops.append(fetch)
    clone = fd.Program.from_desc(desc).clone(for_test=True)
    op = next(o for o in clone.desc.blocks[0].ops if o.type == with_is_test[0])
    assert registry.attr_from_proto(next(x for x in op.attrs if x.name == "is_test")) is True
    pruned = fio.prune_for_inference(desc, ["x"], [out])
    op = next(o for o in pruned.blocks[0].ops if o.type == with_is_test[0])
    assert any(x.name == "is_test" and x.b for x in op.attrs)
    assert [o.type for o in pruned.blocks[0].ops].count(a) == 2


REREAD = """
import sys
import paddle
from paddle.base.proto import framework_pb2 as pb
paddle.enable_static()
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    again = paddle.static.Program.parse_from_string(data).desc.serialize_to_string()
    open(path + ".again", "wb").write(again)
"""


@needs_paddle
def test_paddle_reads_our_files_with_extras_and_unimplemented_ops_back(tmp_path):
    extra, unimplemented = tmp_path / "extra.pdmodel", tmp_path / "unimplemented.pdmodel"
    fio.save_program(_with_extras(fc_program()), extra)
    fio.save_program(unimplemented_program()[0], unimplemented)
    run_paddle(REREAD, tmp_path, extra, unimplemented, name="reread.py")

    def ops(path):  # Paddle orders slots and attributes its own way (maps)
        desc = pb.ProgramDesc.FromString(path.read_bytes())
        return [(op.type, {v.parameter: list(v.arguments) for v in op.inputs},
                 {v.parameter: list(v.arguments) for v in op.outputs},
                 {a.name: a.SerializeToString() for a in op.attrs}) for op in desc.blocks[0].ops]

    assert ops(extra) == ops(tmp_path / "extra.pdmodel.again")
    for ours, paddles in zip(ops(unimplemented), ops(tmp_path / "unimplemented.pdmodel.again")):
        assert ours[:3] == paddles[:3]  # and Paddle adds the extras relu lacks
        assert {k: v for k, v in paddles[3].items() if k in ours[3]} == ours[3]


def test_assign_value_with_paddle_scalars_loads_runs_and_resaves_identically():
    """``paddle.assign(ndarray)`` writes ``assign_value`` whose ``values`` attribute is of
    type SCALARS (Paddle 3.3.1; floats as FLOAT64, ints as LONG, bools as BOOLEAN).
    data/io/paddle_assign_value.program is Paddle's main program of four such ops."""
    raw = (HERE / "paddle_assign_value.program").read_bytes()
    desc = pb.ProgramDesc.FromString(raw)
    ops = [op for op in desc.blocks[0].ops if op.type == "assign_value"]
    assert len(ops) == 4 and all(
        any(a.type == AttrType.SCALARS for a in op.attrs) for op in ops)
    names = [op.outputs[0].arguments[0] for op in ops]
    got = Executor().run(desc, feed={}, fetch_list=names, scope=Scope())
    expected = [np.array([[1.5, 2], [3, 4]], np.float32), np.array([1, 2], np.int64),
                np.array([True, False]), np.array([7, -8], np.int32)]
    for value, want in zip(got, expected):
        assert value.dtype == want.dtype and np.array_equal(value, want)
    # Decoding and re-encoding each attribute gives Paddle's bytes back.
    for op in ops:
        for attr in op.attrs:
            again = registry.attr_to_proto(attr.name, attr.type, registry.attr_from_proto(attr))
            assert again.SerializeToString() == attr.SerializeToString(), attr.name
