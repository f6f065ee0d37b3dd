"""engine.io: program and parameter files, atomic writes, bad files, inference export.

Byte-level expectations come from shared/paddle_compat.md; ``data/io/paddle_fc.*`` were
written by paddlepaddle 3.3.1 itself (``data/io/paddle_runner.py make``).
"""
import os
import struct

import numpy as np
import pytest
from google.protobuf import text_format

from data.io.programs import (HERE, add_op, add_var, fc_program, fc_scope,
                              fc_training_program, netron_minimal_program)
from fluidscope.engine import Executor, LoDTensor, Scope
from fluidscope.engine import io as fio
from fluidscope.engine.io import params, programs, wire
from fluidscope.engine.errors import FluidscopeError, LoadError, ValidationError
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.registry import AttrType

PADDLE_FC = str(HERE / "paddle_fc")


def run(desc, scope, x, fetch=None):
    return Executor().run(desc, feed={"x": x}, fetch_list=fetch, scope=scope)


# ------------------------------------------------------------------ programs
def test_binary_round_trip_is_byte_identical(tmp_path):
    desc = fc_program()
    path = tmp_path / "m.pdmodel"
    fio.save_program(desc, path)
    data = path.read_bytes()
    assert data == desc.SerializeToString(deterministic=True)
    loaded = fio.load_program(path)
    assert loaded == desc
    fio.save_program(loaded, tmp_path / "again.pdmodel")
    assert (tmp_path / "again.pdmodel").read_bytes() == data


def test_text_and_binary_hold_the_same_program(tmp_path):
    desc = fc_training_program()
    fio.save_program(desc, tmp_path / "m.pbtxt")
    fio.save_program(desc, tmp_path / "m.pdmodel")
    assert "blocks {" in (tmp_path / "m.pbtxt").read_text()
    from_text = fio.load_program(tmp_path / "m.pbtxt")
    assert from_text == fio.load_program(tmp_path / "m.pdmodel") == desc
    assert from_text.SerializeToString(deterministic=True) == (tmp_path / "m.pdmodel").read_bytes()


def test_text_accepts_paddle_2_names(tmp_path):
    desc = fc_program()
    desc.blocks[0].vars[0].type.dense_tensor.legacy_lod_level = 1
    text = text_format.MessageToString(desc)
    old = (text.replace("dense_tensor {", "lod_tensor {").replace("DENSE_TENSOR", "LOD_TENSOR")
           .replace("legacy_lod_level:", "lod_level:"))
    assert "legacy" not in old and "dense" not in old.lower()
    (tmp_path / "old.pbtxt").write_text(old)
    assert fio.load_program(tmp_path / "old.pbtxt") == desc


def test_save_refuses_an_invalid_program_and_unknown_names(tmp_path):
    desc = fc_program()
    desc.blocks[0].ops[0].type = "mull"
    with pytest.raises(ValidationError, match="unknown op type 'mull'"):
        fio.save_program(desc, tmp_path / "m.pdmodel")
    assert not (tmp_path / "m.pdmodel").exists()
    with pytest.raises(FluidscopeError, match="unknown program file type"):
        fio.save_program(fc_program(), tmp_path / "m.pb")


def test_netron_minimal_file_starts_with_blocks(tmp_path):
    desc = netron_minimal_program()
    fio.save_program(desc, tmp_path / "model.pdmodel")
    data = (tmp_path / "model.pdmodel").read_bytes()
    assert data[0] == 0x0A  # field 1 (blocks), wire type 2: Netron's sniff needs this first
    length, pos = wire.read_varint(data, 1, len(data), "")
    assert data[pos] == 0x08  # BlockDesc.idx first inside the block
    assert pos + length < len(data) and data[pos + length] == 0x22  # then version (field 4)
    assert fio.load_program(tmp_path / "model.pdmodel") == desc


# ---------------------------------------------------------------- atomicity
def _listing(folder):
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("kind", ["program", "params"])
def test_a_failed_write_leaves_the_old_file_intact(tmp_path, monkeypatch, kind):
    path = tmp_path / ("m.pdmodel" if kind == "program" else "m.pdiparams")
    if kind == "program":
        fio.save_program(fc_program(), path)
    else:
        fio.save_params(path, {"w": np.ones(3, "float32")})
    before, listing = path.read_bytes(), _listing(tmp_path)
    real = programs.program_chunks if kind == "program" else params.params_chunks

    def failing(*args):
        for chunk in real(*args):
            yield bytes(chunk)[: len(chunk) // 2]
            raise RuntimeError("disk on fire")
    if kind == "program":
        monkeypatch.setattr(programs, "program_chunks", failing)
    else:
        monkeypatch.setattr(params, "params_chunks", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        if kind == "program":
            fio.save_program(fc_training_program(), path)
        else:
            fio.save_params(path, {"w": np.zeros(3, "float32"), "v": np.zeros(9)})
    assert path.read_bytes() == before
    assert _listing(tmp_path) == listing  # no temp file left behind


def test_write_errors_are_fluidscope_errors(tmp_path):
    with pytest.raises(FluidscopeError, match="cannot write"):
        fio.save_program(fc_program(), tmp_path / "missing" / "m.pdmodel")
    with pytest.raises(FluidscopeError, match="cannot write"):
        fio.save_params(tmp_path / "missing" / "p.pdiparams", {"w": np.ones(2)})


# ------------------------------------------------------------ bad program files
def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _load_error(path):
    with pytest.raises(LoadError) as info:
        fio.load_program(path)
    assert str(path) in str(info.value)
    return str(info.value)


def _saved_unchecked(desc, tmp_path, name="m.pdmodel"):
    path = tmp_path / name
    fio.save_program(desc, path, validate=False)
    return str(path)


def test_truncated_binary(tmp_path):
    data = fc_program().SerializeToString()
    message = _load_error(_write(tmp_path, "t.pdmodel", data[: len(data) // 2]))
    assert "at byte 0" in message and "truncated" in message


def _varint_bytes(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def test_truncated_inside_a_nested_message_names_the_field_path(tmp_path):
    data = fc_program().SerializeToString()
    block_len, pos = wire.read_varint(data, 1, len(data), "")
    block = data[pos:pos + block_len][:20]  # ends inside blocks[0].vars[0]
    message = _load_error(_write(tmp_path, "n.pdmodel", b"\x0a" + _varint_bytes(20) + block))
    assert "(blocks[0]): vars claims" in message and "truncated" in message


def test_random_garbage(tmp_path):
    rng = np.random.default_rng(1)
    for i in range(20):
        data = rng.integers(0, 256, 200, dtype=np.uint8).tobytes()
        message = _load_error(_write(tmp_path, f"g{i}.pdmodel", data))
        assert "ProgramDesc" in message or "invalid program" in message


def test_empty_file(tmp_path):
    assert "empty" in _load_error(_write(tmp_path, "e.pdmodel", b""))
    assert "empty" in _load_error(_write(tmp_path, "e.pbtxt", b""))


def test_text_garbage(tmp_path):
    message = _load_error(_write(tmp_path, "t.pdmodel", b"hello world, not protobuf"))
    assert "not a valid binary ProgramDesc" in message or "no blocks" in message
    message = _load_error(_write(tmp_path, "t.pbtxt", b"blocks {\n  idx: 0\n  bogus: 1\n}\n"))
    assert "3:" in message and "bogus" in message
    assert "not UTF-8" in _load_error(_write(tmp_path, "u.pbtxt", b"blocks {\xff\xfe}"))
    assert "JSON" in _load_error(_write(tmp_path, "j.pdmodel", b'{"base_code": {}}'))


def test_invalid_utf8_in_a_binary_string(tmp_path):
    data = fc_program().SerializeToString(deterministic=True)
    data = data.replace(b"fc_0.w_0", b"fc_0.w\xff\xfe", 1)
    message = _load_error(_write(tmp_path, "s.pdmodel", data))
    assert "invalid UTF-8" in message and "blocks[0].vars[1].name" in message


def test_missing_required_field(tmp_path):
    desc = fc_program()
    desc.blocks[0].ClearField("parent_idx")
    path = _write(tmp_path, "r.pdmodel", desc.SerializePartialToString())
    assert "missing required field blocks[0].parent_idx" in _load_error(path)


def test_wrong_attr_type(tmp_path):
    desc = fc_program()
    axis = desc.blocks[0].ops[1].attrs[0]
    axis.type, axis.s = AttrType.STRING, "1"
    message = _load_error(_saved_unchecked(desc, tmp_path))
    assert "op #1 (elementwise_add): attribute 'axis' has type STRING, expected INT" in message


def test_unknown_op_and_undeclared_var(tmp_path):
    desc = fc_program()
    desc.blocks[0].ops[2].type = "relu7"
    desc.blocks[0].ops[3].outputs[0].arguments[0] = "ghost"
    message = _load_error(_saved_unchecked(desc, tmp_path, "u.pbtxt"))
    assert "2 problems" in message
    assert "unknown op type 'relu7'" in message and "'ghost'" in message


def test_unreadable_paths(tmp_path):
    assert "cannot read" in _load_error(str(tmp_path / "nope.pdmodel"))
    os.mkdir(tmp_path / "dir.pdmodel")
    assert "cannot read" in _load_error(str(tmp_path / "dir.pdmodel"))
    assert "unknown program file type" in _load_error(_write(tmp_path, "m.bin", b"\x0a\x00"))


# --------------------------------------------------------------- parameters
def _record(var_type, dims, payload):
    """One tensor of the combined stream, assembled by hand from the spec."""
    tensor_desc = bytes([0x08, var_type]) + b"".join(bytes([0x10, d]) for d in dims)
    return (struct.pack("<IQI", 0, 0, 0) + struct.pack("<i", len(tensor_desc)) + tensor_desc
            + payload)


def test_params_bytes_match_the_spec(tmp_path):
    w = np.array([[1, 2, 3], [4, 5, 6]], "float32")
    b = np.array([0.5, -1.0, 2.0], "float32")
    step = np.array([7], "int64")
    fio.save_params(tmp_path / "p.pdiparams", {"w": w, "b": b, "step": step})
    expected = (_record(5, [3], b.tobytes()) + _record(3, [1], step.tobytes())
                + _record(5, [2, 3], w.tobytes()))  # sorted: b, step, w
    assert (tmp_path / "p.pdiparams").read_bytes() == expected
    assert expected[16:24] == bytes.fromhex("04000000 08051003".replace(" ", ""))


def test_params_equal_paddles_own_bytes(tmp_path):
    desc = fio.load_program(PADDLE_FC + ".pdmodel")
    specs = fio.param_specs(desc)
    assert [s[0] for s in specs] == ["fc_0.b_0", "fc_0.w_0"]
    values = fio.load_params(PADDLE_FC + ".pdiparams", specs)
    fio.save_params(tmp_path / "p.pdiparams", values)
    assert (tmp_path / "p.pdiparams").read_bytes() == open(PADDLE_FC + ".pdiparams", "rb").read()


def test_params_round_trip_all_dtypes(tmp_path):
    rng = np.random.default_rng(0)
    tensors = {f"v_{np.dtype(t).name}": (rng.standard_normal((2, 3)) * 9).astype(t)
               for t in ("float32", "float64", "float16", "int64", "int32", "int16",
                         "int8", "uint8", "bool")}
    tensors["scalar"] = np.array(3.5, "float32")
    tensors["empty"] = np.zeros((0, 4), "float32")
    tensors["big_endian"] = np.arange(5, dtype=">i4")
    tensors["seq"] = LoDTensor(np.arange(5, dtype="float32").reshape(5, 1), [[0, 2, 5]])
    fio.save_params(tmp_path / "p.pdiparams", tensors)
    specs = [(n, np.asarray(getattr(v, "value", v)).dtype.newbyteorder("="),
              np.shape(getattr(v, "value", v))) for n, v in tensors.items()]
    loaded = fio.load_params(tmp_path / "p.pdiparams", specs)
    assert sorted(loaded) == sorted(tensors)
    for name, value in tensors.items():
        if name == "seq":
            assert loaded[name].lod() == [[0, 2, 5]]
            np.testing.assert_array_equal(loaded[name].numpy(), value.numpy())
        else:
            assert loaded[name].dtype == value.dtype.newbyteorder("=")
            np.testing.assert_array_equal(loaded[name], value)


def _params_error(path, specs):
    with pytest.raises(LoadError) as info:
        fio.load_params(path, specs)
    assert str(path) in str(info.value)
    return str(info.value)


@pytest.fixture
def params_file(tmp_path):
    path = tmp_path / "p.pdiparams"
    fio.save_params(path, {"a": np.ones((2, 2), "float32"), "b": np.arange(3, dtype="int64")})
    return path


SPECS = [("b", "int64", [3]), ("a", "float32", [2, 2])]


def test_params_wrong_dtype_and_dims(params_file):
    message = _params_error(params_file, [("a", "float64", [2, 2]), ("b", "int64", [3])])
    assert "var 'a' at byte 20" in message and "float32 [2, 2]" in message
    assert "declares float64" in message
    message = _params_error(params_file, [("a", "float32", [4]), ("b", "int64", [3])])
    assert "var 'a'" in message and "[4]" in message
    assert fio.load_params(params_file, [("a", "float32", [-1, 2]), ("b", 3, [-1])])["b"][2] == 2


def test_params_truncated_trailing_and_missing(params_file, tmp_path):
    data = params_file.read_bytes()
    cut = _write(tmp_path, "cut.pdiparams", data[:-5])
    message = _params_error(cut, SPECS)
    assert "var 'b'" in message and "truncated" in message and "byte" in message
    head = _write(tmp_path, "head.pdiparams", data[:10])
    assert "var 'a' at byte 4" in _params_error(head, SPECS)
    extra = _write(tmp_path, "extra.pdiparams", data + b"\0" * 7)
    message = _params_error(extra, SPECS)
    assert "7 trailing bytes" in message and f"byte {len(data)}" in message
    message = _params_error(params_file, SPECS + [("c", "float32", [1])])
    assert "var 'c'" in message and "missing" in message
    garbage = _write(tmp_path, "g.pdiparams", b"\x01" + data[1:])
    assert "var 'a' at byte 0" in _params_error(garbage, SPECS)
    empty = _write(tmp_path, "e.pdiparams", b"")
    assert "ends at byte 0" in _params_error(empty, SPECS)
    assert "cannot read" in _params_error(tmp_path / "none.pdiparams", SPECS)


# ------------------------------------------------------------ inference export
def test_prune_keeps_the_forward_ops_the_fetch_needs():
    desc = fc_training_program()
    pruned = fio.prune_for_inference(desc, ["x"], ["out"])
    block = pruned.blocks[0]
    assert [op.type for op in block.ops] == [
        "feed", "mul", "elementwise_add", "dropout", "scale", "fetch"]
    feed, fetch = block.ops[0], block.ops[-1]
    assert (feed.inputs[0].arguments, feed.outputs[0].arguments) == (["feed"], ["x"])
    assert (fetch.inputs[0].arguments, fetch.outputs[0].arguments) == (["out"], ["fetch"])
    assert [(a.name, a.type, a.i) for a in feed.attrs] == [("col", AttrType.INT, 0)]
    dropout = block.ops[3]
    assert [a.b for a in dropout.attrs if a.name == "is_test"] == [True]
    holders = {v.name: v for v in block.vars if v.name in ("feed", "fetch")}
    assert holders["feed"].type.type == pb.VarType.FEED_MINIBATCH and holders["feed"].persistable
    assert holders["fetch"].type.type == pb.VarType.FETCH_LIST and holders["fetch"].persistable
    names = {v.name for v in block.vars}
    assert "loss" not in names and "learning_rate_0" not in names
    assert not any(n.endswith("@GRAD") for n in names)
    inputs = {n for op in block.ops for v in op.inputs for n in v.arguments}
    persistable = {v.name for v in block.vars if v.persistable} - {"feed", "fetch"}
    assert persistable == {"fc_0.w_0", "fc_0.b_0"} and persistable <= inputs
    assert pruned.version.version == 3003001
    assert len(desc.blocks[0].ops) > 10  # the source program is untouched


def test_prune_orders_feeds_and_fetches_by_col_and_names_missing_inputs():
    desc = fc_program()
    pruned = fio.prune_for_inference(desc, ["x"], ["out", "fc_0.tmp_0"])
    fetches = [op for op in pruned.blocks[0].ops if op.type == "fetch"]
    assert [(op.inputs[0].arguments[0], op.attrs[0].i) for op in fetches] == [
        ("out", 0), ("fc_0.tmp_0", 1)]
    with pytest.raises(FluidscopeError, match=r"'x' \(read by op #0 \(mul\)\) is not fed"):
        fio.prune_for_inference(desc, [], ["out"])
    pruned = fio.prune_for_inference(desc, ["fc_0.tmp_1"], ["out"])
    assert [op.type for op in pruned.blocks[0].ops] == ["feed", "relu", "scale", "fetch"]
    with pytest.raises(FluidscopeError, match="'nope' is not a variable"):
        fio.prune_for_inference(desc, ["x"], ["nope"])


def test_inference_files_round_trip(tmp_path):
    desc, scope = fc_training_program(), fc_scope()
    x = np.random.default_rng(5).standard_normal((6, 4)).astype("float32")
    pruned = fio.save_inference_model_files(tmp_path / "sub" / "model", desc, ["x"], ["out"], scope)
    assert sorted(os.listdir(tmp_path / "sub")) == ["model.pdiparams", "model.pdmodel"]
    loaded_scope = Scope()
    loaded, feeds, fetches = fio.load_inference_model_files(tmp_path / "sub" / "model",
                                                            loaded_scope)
    assert loaded == pruned and (feeds, fetches) == (["x"], ["out"])
    assert loaded_scope.find_var("learning_rate_0") is None
    w, b = (np.asarray(scope.find_var(n).get_tensor()) for n in ("fc_0.w_0", "fc_0.b_0"))
    expected = (x @ w + b) * 2.0 + 0.5  # dropout in test mode (upscale_in_train) = identity
    np.testing.assert_allclose(run(loaded, loaded_scope, x)[0], expected, rtol=1e-6)


def test_save_inference_needs_parameter_values(tmp_path):
    scope = fc_scope()
    scope.var("fc_0.w_0").get_tensor().set(np.ones((3, 3), "float32"))
    with pytest.raises(FluidscopeError, match=r"'fc_0.w_0'.*\[3, 3\].*\[4, 3\]"):
        fio.save_inference_model_files(tmp_path / "m", fc_program(), ["x"], ["out"], scope)
    with pytest.raises(FluidscopeError, match="'fc_0.b_0' has no value"):
        fio.save_inference_model_files(tmp_path / "m", fc_program(), ["x"], ["out"], Scope())
    assert not os.listdir(tmp_path)


def test_paddle_written_model_runs_here():
    scope = Scope()
    desc, feeds, fetches = fio.load_inference_model_files(PADDLE_FC, scope)
    assert feeds == ["x"] and len(fetches) == 1
    x = np.load(str(HERE / "paddle_fc_x.npy"))
    out = Executor().run(desc, feed={"x": x}, scope=scope)[0]
    np.testing.assert_allclose(out, np.load(str(HERE / "paddle_fc_out.npy")), rtol=1e-5)


def test_inference_file_with_a_broken_params_file(tmp_path):
    fio.save_inference_model_files(tmp_path / "m", fc_program(), ["x"], ["out"], fc_scope())
    data = (tmp_path / "m.pdiparams").read_bytes()
    (tmp_path / "m.pdiparams").write_bytes(data[:-1])
    with pytest.raises(LoadError, match="var 'fc_0.w_0'"):
        fio.load_inference_model_files(tmp_path / "m", Scope())


# ------------------------------------------------------- designer wrappers
def test_designer_inference_model_and_params_round_trip(tmp_path):
    import fluidscope.designer as fd
    from fluidscope.designer import io as fdio

    main, startup, scope = fd.Program(), fd.Program(), fd.Scope()
    with fd.unique_name.guard(), fd.program_guard(main, startup), fd.scope_guard(scope):
        x = fd.data("x", [None, 4])
        y = fd.fc(fd.dropout(fd.fc(x, 5, act="tanh"), 0.3), 2)
        loss = fd.mean(y)
        fd.optimizer.SGD(0.1).minimize(loss)
        exe = fd.Executor()
        exe.run(startup)
        data = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
        exe.run(main, feed={"x": data}, fetch_list=[loss])  # one training step
        expected = exe.run(main.clone(for_test=True), feed={"x": data}, fetch_list=[y])[0]
        pruned = fdio.save_inference_model(str(tmp_path / "m"), [x], [y], exe)
        fdio.save(main, str(tmp_path / "all.pdiparams"))
        fdio.save_program(main, str(tmp_path / "main.pbtxt"))
    assert isinstance(pruned, fd.Program)
    assert [op.type for op in pruned.global_block().ops][0] == "feed"

    with fd.scope_guard(fd.Scope()):
        exe = fd.Executor()
        program, feed_names, fetch_targets = fdio.load_inference_model(str(tmp_path / "m"), exe)
        assert feed_names == ["x"] and [v.name for v in fetch_targets] == [y.name]
        assert fetch_targets[0].shape == (-1, 2)
        out = exe.run(program, feed={"x": data}, fetch_list=fetch_targets)[0]
    np.testing.assert_allclose(out, expected, rtol=1e-6)

    loaded_main = fdio.load_program(str(tmp_path / "main.pbtxt"))
    assert loaded_main.desc == main.desc
    fresh = fd.Scope()
    with fd.scope_guard(fresh):
        names = fdio.load(loaded_main, str(tmp_path / "all.pdiparams"), fd.Executor())
    assert names == ['fc_0.b_0', 'fc_0.w_0', 'fc_1.b_0', 'fc_1.w_0', 'learning_rate_0']
    for name in names:
        np.testing.assert_array_equal(np.asarray(fresh.find_var(name).get_tensor()),
                                      np.asarray(scope.find_var(name).get_tensor()))


def test_prune_keeps_and_renumbers_the_sub_blocks_of_kept_ops(monkeypatch):
    from fluidscope.engine import registry
    from fluidscope.engine.ir.registry import Attr, Slot

    monkeypatch.setattr(registry, "_OPS", dict(registry._OPS))  # restored after the test
    registry.register("test_loop", inputs=[Slot("X", duplicable=True)],
                      outputs=[Slot("Out", duplicable=True)],
                      attrs=[Attr("sub_block", AttrType.BLOCK), Attr("is_test", AttrType.BOOLEAN,
                                                                      False)])
    desc = fc_program()
    b0 = desc.blocks[0]
    add_var(b0, "looped", [-1, 3])
    add_var(b0, "extra_w", [3, 3], persistable=True, is_parameter=True)
    grad_block = desc.blocks.add(idx=1, parent_idx=0)  # dropped: no kept op owns it
    add_var(grad_block, "junk", [1])
    body = desc.blocks.add(idx=2, parent_idx=0)
    add_var(body, "inner", [-1, 3])
    add_op(body, "mul", {"X": ["out"], "Y": ["extra_w"]}, {"Out": ["inner"]})
    add_op(body, "relu", {"X": ["inner"]}, {"Out": ["looped"]})
    add_op(b0, "test_loop", {"X": ["out"]}, {"Out": ["looped"]}, sub_block=2)
    pruned = fio.prune_for_inference(desc, ["x"], ["looped"])
    assert [(b.idx, b.parent_idx) for b in pruned.blocks] == [(0, -1), (1, 0)]
    loop = [op for op in pruned.blocks[0].ops if op.type == "test_loop"][0]
    attrs = {a.name: a for a in loop.attrs}
    assert attrs["sub_block"].block_idx == 1 and attrs["is_test"].b is True
    assert [op.type for op in pruned.blocks[1].ops] == ["mul", "relu"]
    kept = {v.name: v for v in pruned.blocks[0].vars}
    assert kept["extra_w"].persistable  # read only inside the sub-block, still a weight
    assert [s[0] for s in fio.param_specs(pruned)] == ["extra_w", "fc_0.b_0", "fc_0.w_0"]
