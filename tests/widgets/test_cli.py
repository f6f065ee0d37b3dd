"""The ``fluidscope`` command line: the command itself, ``info``, ``render`` and ``convert``,
each run as a subprocess (``python -m fluidscope.widgets.cli``, or the console script)
on small model files with outputs and exit codes asserted, error paths included; cases
that need no new process call ``main(argv)`` (``test_cli_run.py``: ``run`` and ``lab``).

Exit codes: 0 done, 1 a user error told in one line on stderr without a traceback, 2 a
usage error (argparse's).
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cli_helpers import (DATA, FC, FC_OUT, ROOT, VERBS, assert_user_error, call,
                         classifier_design, cli, unimplemented_model)
import fluidscope.designer as fd
from fluidscope.engine import io as fio
from fluidscope.widgets.cli.app import one_line


# ------------------------------------------------------------------ the command
def test_the_console_script_is_declared_installed_and_runs():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"fluidscope": "fluidscope.widgets.cli:main"}
    script = pathlib.Path(sys.executable).parent / "fluidscope"
    assert script.is_file(), "no console script: re-run scripts/setup.sh (pip install -e .)"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for verb in VERBS:
        assert f"    {verb} " in done.stdout


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_help(capsys, verb):
    code, out, _ = call(capsys, verb, "--help")
    assert code == 0
    assert out.startswith(f"usage: fluidscope {verb} ")


def test_usage_errors_exit_2_as_argparse_does(capsys):
    for args, said in ((["bogus"], "invalid choice: 'bogus'"), ([], "required: VERB"),
                       (["info"], "required: model"),
                       (["render", str(FC), "--mode", "shapes"], "invalid choice: 'shapes'"),
                       (["render", str(FC), "-o", "x.png"], "'x.png' must end in .svg"),
                       (["convert", str(FC), "x.onnx"], "unknown target type"),
                       (["run", str(FC), "--feed", "x"], "'x' is not NAME=FILE.npy"),
                       (["run", str(FC), "-o", "out.npy"], "must end in .npz"),
                       (["lab", "--port=1"], "unrecognized arguments: --port=1")):
        code, _, err = call(capsys, *args)
        assert code == 2, args
        assert said in err and "usage: fluidscope" in err


def test_a_validation_report_becomes_one_line():
    assert one_line("m.pdmodel: invalid program (2 problems):\n  - op #1: a\n  - op #2: b") \
        == "m.pdmodel: invalid program (2 problems): op #1: a; op #2: b"


# ------------------------------------------------------------------ info
def test_info_on_a_paddle_model():
    code, out, err = cli("info", f"{FC}.pdmodel")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{FC}.pdmodel: binary ProgramDesc, 1 block, 4 ops"
    assert lines[1:5] == ["inputs:", "  x  [?, 4] float32", "outputs:",
                          f"  {FC_OUT}  [?, 3] float32"]
    assert "  mul              1" in lines
    assert f"parameters: 15 values in 2 tensors, 60 bytes (from {FC}.pdiparams)" in lines
    assert lines[-1] == "unimplemented ops: none"


def test_info_json_from_a_prefix(capsys):
    code, out, _ = call(capsys, "info", FC, "--json")
    assert code == 0
    facts = json.loads(out)
    assert facts["inputs"] == [{"name": "x", "shape": [-1, 4], "dtype": "float32",
                                "lod_level": 0, "type": "[?, 4] float32"}]
    assert [v["name"] for v in facts["outputs"]] == [FC_OUT]
    assert facts["ops"] == {"elementwise_add": 1, "mul": 1, "relu": 1, "scale": 1}
    assert facts["phases"] == {"forward": 4} and facts["unimplemented"] == {}
    assert facts["parameters"] == {"tensors": 2, "file": f"{FC}.pdiparams", "source": "file",
                                   "values": 15, "bytes": 60}


def test_info_on_a_design_and_its_text_program(tmp_path, capsys):
    design = classifier_design(tmp_path / "clf.fsdesign.json")
    code, out, _ = call(capsys, "info", design, "--json")
    assert code == 0
    facts = json.loads(out)
    assert facts["kind"] == "design" and facts["layers"] == 6
    assert [v["name"] for v in facts["inputs"]] == ["x", "label"] and facts["outputs"] == []
    assert facts["phases"] == {"forward": 7, "backward": 8, "optimize": 4}
    assert facts["ops"]["sgd"] == 4 and facts["ops"]["mul_grad"] == 2
    # weights 4x8 + 8 + 8x3 + 3 and the learning rate, declared (a design holds no values)
    assert facts["parameters"] == {"tensors": 5, "file": None, "source": "declared",
                                   "values": 68, "bytes": 272}
    assert call(capsys, "convert", design, tmp_path / "clf.pbtxt")[0] == 0
    code, out, _ = call(capsys, "info", tmp_path / "clf.pbtxt", "--json")
    text_facts = json.loads(out)
    assert text_facts["kind"] == "text" and text_facts["ops"] == facts["ops"]


def test_info_names_the_ops_fluidscope_does_not_implement_and_run_refuses(tmp_path, capsys):
    op_type = unimplemented_model(tmp_path / "m.pdmodel")
    code, out, err = cli("info", tmp_path / "m.pdmodel")
    assert code == 0, err
    assert out.splitlines()[-1].startswith(
        f"unimplemented ops: fluidscope does not implement: {op_type} (1x)")
    np.save(tmp_path / "x.npy", np.ones((2, 4), "float32"))
    code, _, err = call(capsys, "run", tmp_path / "m", "--feed", f"x={tmp_path / 'x.npy'}")
    assert_user_error(code, err, f"fluidscope does not implement: {op_type} (1x)")
    # what info promises: such a model still renders and converts
    assert call(capsys, "render", tmp_path / "m", "--mode", "ops", "-o", tmp_path / "m.dot")[0] == 0
    assert f"label={op_type}" in (tmp_path / "m.dot").read_text()
    assert call(capsys, "convert", tmp_path / "m", tmp_path / "m.pbtxt")[0] == 0
    assert fio.load_program(tmp_path / "m.pbtxt") == fio.load_program(tmp_path / "m.pdmodel")


def test_info_on_a_design_that_does_not_build_and_one_saved_as_plain_json(tmp_path, capsys):
    d = fd.Design()
    x = d.add("data", name="x", shape=[None, 4])
    y = d.add("data", name="y", shape=[None, 5])
    d.add("relu", inputs={"x": d.add("elementwise_add", inputs={"x": x, "y": y})})
    d.save(tmp_path / "broken.fsdesign.json")
    code, _, err = call(capsys, "info", tmp_path / "broken.fsdesign.json")
    assert_user_error(code, err, "the design does not build: node 'elementwise_add_0'",
                      "[-1, 4] and Y [-1, 5] do not broadcast", "'relu_0' waits on")
    classifier_design(tmp_path / "clf.json")  # a design under a plain .json name
    code, out, _ = call(capsys, "info", tmp_path / "clf.json")
    assert code == 0 and out.startswith(f"{tmp_path / 'clf.json'}: design, 1 block, 19 ops")


def test_info_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "junk.pdmodel").write_bytes(b"\x0a\xff\xff junk")
    (tmp_path / "empty.pbtxt").write_text("blocks { idx: 0 parent_idx: -1 } nonsense")
    (tmp_path / "other.json").write_text('{"a": 1}')
    (tmp_path / "bad.fsdesign.json").write_text('{"format": "fluidscope-design", "version": 1, '
                                                '"nodes": [{"id": "f", "layer": "nope"}]}')
    for path, said in ((tmp_path / "missing.pdmodel", "cannot read"),
                       (tmp_path / "missing", "no such file (nor"),
                       (tmp_path, "is a folder"),
                       (tmp_path / "junk.pdmodel", "not a valid binary ProgramDesc"),
                       (tmp_path / "empty.pbtxt", "not a ProgramDesc in text format"),
                       (tmp_path / "other.json", "neither a fluidscope design"),
                       (tmp_path / "bad.fsdesign.json", "nope"),
                       (DATA / "pir" / "model.json", "Paddle 3 PIR program"),
                       (DATA / "pir" / "model", "FLAGS_enable_pir_api=0")):
        code, _, err = call(capsys, "info", path)
        assert_user_error(code, err, str(path), said)
        assert err.startswith("fluidscope info: error: ")


def test_info_error_in_a_new_process_has_no_traceback(tmp_path):
    code, out, err = cli("info", DATA / "pir" / "model.json")
    assert out == ""
    assert_user_error(code, err, "PIR program", "FLAGS_enable_pir_api=0")


# ------------------------------------------------------------------ render
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_render_svg(tmp_path):
    code, out, err = cli("render", f"{FC}.pdmodel", "-o", tmp_path / "fc.svg", "--mode", "ops")
    assert code == 0, err
    assert out.startswith(f"wrote {tmp_path / 'fc.svg'} (ops, ")
    svg = ET.parse(tmp_path / "fc.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    titles = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")}
    assert {"op_0_1", "op_0_2", "op_0_3", "op_0_4", "var_0_x", "var_0_fc_0.w_0"} <= titles
    texts = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"mul", "elementwise_add", "relu", "scale"} <= texts


def test_render_modes_of_a_design(tmp_path, capsys):
    design = classifier_design(tmp_path / "clf.fsdesign.json")
    dots = {}
    for mode in ("layers", "ops", "backward"):
        code, out, _ = call(capsys, "render", design, "--mode", mode, "-o",
                            tmp_path / f"{mode}.dot")
        assert code == 0 and out.startswith(f"wrote {tmp_path / f'{mode}.dot'} ({mode}, ")
        dots[mode] = (tmp_path / f"{mode}.dot").read_text()
    # layers: fc_0's mul + elementwise_add + relu drawn as one box; ops: op 0 is its mul
    assert 'id="group:0:/fc_0/"' in dots["layers"] and 'id="op:0:0"' not in dots["layers"]
    assert 'id="group:0:/fc_0/"' not in dots["ops"] and 'id="op:0:0"' in dots["ops"]
    assert "mul_grad" in dots["backward"] and "mul_grad" not in dots["ops"]
    assert "sgd" not in dots["backward"]
    code, out, _ = call(capsys, "render", design, "--mode", "ops", "--rankdir", "LR")
    assert code == 0 and out.startswith("digraph program {") and "rankdir=LR" in out


def test_render_errors(tmp_path, capsys):
    code, _, err = call(capsys, "render", f"{FC}.pdmodel", "--mode", "backward")
    assert_user_error(code, err, "has no gradient ops to draw")
    code, _, err = call(capsys, "render", f"{FC}.pdmodel", "-o", tmp_path / "no" / "a.svg")
    assert_user_error(code, err, "the folder", "does not exist")
    assert not (tmp_path / "no").exists()


# ------------------------------------------------------------------ convert
def test_convert_binary_text_binary_is_byte_identical_with_parameters(tmp_path):
    code, out, err = cli("convert", f"{FC}.pdmodel", tmp_path / "fc.pbtxt")
    assert code == 0, err
    assert out == f"wrote {tmp_path / 'fc.pbtxt'}, {tmp_path / 'fc.pdiparams'}\n"
    assert (tmp_path / "fc.pbtxt").read_text().startswith("blocks {")
    code, _, err = cli("convert", tmp_path / "fc.pbtxt", tmp_path / "again.pdmodel")
    assert code == 0, err
    assert (tmp_path / "again.pdmodel").read_bytes() == FC.with_suffix(".pdmodel").read_bytes()
    assert (tmp_path / "again.pdiparams").read_bytes() == FC.with_suffix(".pdiparams").read_bytes()


def test_convert_program_design_python_and_back(tmp_path, capsys):
    assert call(capsys, "convert", FC, tmp_path / "fc.fsdesign.json")[0] == 0
    assert json.loads((tmp_path / "fc.fsdesign.json").read_text())["format"] == "fluidscope-design"
    assert call(capsys, "convert", tmp_path / "fc.fsdesign.json", tmp_path / "fc.pdmodel")[0] == 0
    original, back = fio.load_program(f"{FC}.pdmodel"), fio.load_program(tmp_path / "fc.pdmodel")
    assert list(back.blocks[0].ops) == list(original.blocks[0].ops)
    assert not (tmp_path / "fc.pdiparams").exists()  # a design holds no weights
    design = classifier_design(tmp_path / "clf.fsdesign.json")
    assert call(capsys, "convert", design, tmp_path / "clf.py")[0] == 0
    assert call(capsys, "convert", design, tmp_path / "clf.pdmodel")[0] == 0
    namespace = {}  # the script we generated, run to compare what it builds
    exec(compile((tmp_path / "clf.py").read_text(), "clf.py", "exec"), namespace)  # noqa: S102
    assert namespace["main_program"].desc == fio.load_program(tmp_path / "clf.pdmodel")


def test_convert_checks_parameters_before_writing(tmp_path, capsys):
    for suffix in (".pdmodel", ".pdiparams"):
        shutil.copy(FC.with_suffix(suffix), tmp_path / f"m{suffix}")
    with open(tmp_path / "m.pdiparams", "ab") as f:
        f.write(b"\0")
    code, _, err = call(capsys, "convert", tmp_path / "m", tmp_path / "out.pbtxt")
    assert_user_error(code, err, "m.pdiparams", "1 trailing bytes")
    assert not (tmp_path / "out.pbtxt").exists()
    code, _, err = call(capsys, "convert", FC, tmp_path / "no" / "out.py")
    assert_user_error(code, err, "does not exist")
