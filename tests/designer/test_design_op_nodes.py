"""Programs without a layer record (files, op-level programs) as designs of op nodes."""
import pytest

import fluidscope.designer as fd
from fluidscope.designer import DesignError
from fluidscope.engine import io as engine_io
from fluidscope.engine.autodiff.gradcheck import build_single_op
from op_matrix import all_cases

from design_models import char_lstm, classifier, composites

PADDLE_VERSION = 3003001


def _op_matrix_programs():
    for case in all_cases():
        if not case.direct:
            yield case.id, (case.program().desc if case.program is not None else
                            build_single_op(case.op, case.inputs, case.attrs)[0])


PROGRAMS = list(_op_matrix_programs())


def _run_script(source):
    namespace = {}  # our own generated script; nothing a user loads is executed
    exec(compile(source, "generated_program.py", "exec"), namespace)  # noqa: S102
    return namespace["main_program"]


@pytest.mark.parametrize("case_id, desc", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_op_matrix_program_to_design_to_program_and_code_are_byte_identical(case_id, desc):
    if not desc.HasField("version"):  # every Program fluidscope makes carries one
        desc.version.version = PADDLE_VERSION
    program = fd.Program.from_desc(desc)
    d = fd.Design.from_program(program)
    built = d.build(scope=fd.Scope(), optimize=False)
    assert built.errors == {}
    assert built.main.desc.SerializeToString() == desc.SerializeToString()
    assert _run_script(fd.program_to_python(program)).desc.SerializeToString() == \
        desc.SerializeToString()


def test_a_loaded_training_program_comes_back_as_op_nodes_and_rebuilds_its_bytes(tmp_path):
    built = classifier().build(scope=fd.Scope())
    path = tmp_path / "model.pdmodel"
    engine_io.save_program(built.main.desc, str(path))
    loaded = fd.Program.from_desc(engine_io.load_program(str(path)))
    d = fd.Design.from_program(loaded)
    layers = {n.layer for n in d.nodes.values()}
    assert layers == {"variable", "op"}
    assert d.node("mul_0").inputs == {"X": [fd.design.Ref("x")], "Y": [fd.design.Ref("fc_0.w_0")]}
    again = d.build(scope=fd.Scope(), optimize=False)
    assert again.main.desc.SerializeToString() == loaded.desc.SerializeToString()
    design_path = tmp_path / "ops.fsdesign.json"
    d.save(design_path)
    assert fd.Design.load(design_path) == d


def test_an_op_node_is_editable():
    built = classifier().build(scope=fd.Scope(), optimize=False)
    plain = fd.Program.from_desc(type(built.main.desc).FromString(built.main.desc.SerializeToString()))
    d = fd.Design.from_program(plain)
    attrs = dict(d.node("relu_0").attrs)
    d.set("relu_0", type="tanh")
    ops = [op.type for op in d.build(scope=fd.Scope(), optimize=False).main.global_block().ops]
    assert ops[2] == "tanh"
    d.set("relu_0", attrs={**attrs["attrs"], "colour": 1})
    assert "no attribute 'colour'" in d.build(scope=fd.Scope(), optimize=False).errors["relu_0"]
    with pytest.raises(DesignError, match="op tanh has no input slot 'Y'"):
        d.connect("x", "relu_0", "Y")


def test_the_catalog_offers_every_registry_op_as_an_op_node():
    from fluidscope.engine import registry
    spec = next(s for s in fd.catalog() if s.name == "op")
    assert set(spec.attr("type").choices) == set(registry.all_ops())


@pytest.mark.parametrize("make", [composites, char_lstm])
def test_a_loaded_recurrent_training_program_rebuilds_with_its_sub_blocks(make):
    built = make().build(scope=fd.Scope())
    plain = fd.Program.from_desc(type(built.main.desc).FromString(
        built.main.desc.SerializeToString()))  # no layer record: what a file gives
    d = fd.Design.from_program(plain)
    recurrent = [n for n in d.nodes.values() if n.attrs.get("type") == "recurrent"]
    assert recurrent and all(n.body is not None for n in recurrent)
    again = d.build(scope=fd.Scope(), optimize=False)
    assert again.errors == {}
    assert again.main.desc.SerializeToString() == plain.desc.SerializeToString()
    assert _run_script(fd.program_to_python(plain)).desc.SerializeToString() == \
        plain.desc.SerializeToString()
    assert fd.Design.from_json(d.to_json()) == d
