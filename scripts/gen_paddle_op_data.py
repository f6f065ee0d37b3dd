"""Write engine/ir/paddle_ops.json: every op type PaddlePaddle 3.3.1 registers, from Paddle itself.

Run it with the Paddle oracle (scripts/setup_paddle_venv.sh makes .venv-paddle)::

    FLAGS_enable_pir_api=0 GLOG_minloglevel=3 .venv-paddle/bin/python scripts/gen_paddle_op_data.py

For each op type (``core.get_all_op_names()``: forward ops and their ``_grad`` ops) it
records Paddle's runtime-only "extra" attributes (``core.get_op_extra_attrs``) with the
AttrType Paddle writes for each, and for the ops with an OpProto (the forward ops) their
input and output slots and attributes. fluidscope reads the file through
``engine.ir.paddle_ops``: to accept files Paddle writes (which carry the extra attributes)
and to load, view and re-save programs holding ops it does not implement.

The output is deterministic (sorted keys, one op per line) so a regenerated file diffs well.
"""
from __future__ import annotations

import json
import os
import sys

from paddle.base import core
from paddle.base.proto import framework_pb2 as pb

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine", "ir",
                   "paddle_ops.json")
FORMAT = "fluidscope-paddle-ops/1"


def _attr_type_as_written(op_type, name, value):
    """The AttrType Paddle gives ``value`` when it writes the attribute into an OpDesc
    (what a saved file holds): set it on a C++ OpDesc and read the proto back."""
    desc = core.OpDesc()
    desc.set_type(op_type)
    desc._set_attr(name, value)
    proto = pb.OpDesc.FromString(desc.serialize_to_string())
    return pb.AttrType.Name(next(a.type for a in proto.attrs if a.name == name))


def _proto_default(op_type, attr):
    """Paddle's default of an OpProto attribute marked extra (None where it has none)."""
    try:
        return core.get_op_attrs_default_value(op_type.encode()).get(attr.name)
    except Exception:  # noqa: BLE001  an op Paddle cannot give defaults for
        return None


def _slot(var):
    """A slot as a name with Paddle's flags as suffixes (see LEGEND)."""
    return (var.name + ("[]" if var.duplicable else "") + ("?" if var.dispensable else "")
            + ("!" if var.intermediate else ""))


def collect():
    protos = {}
    for raw in core.get_all_op_protos():
        proto = pb.OpProto.FromString(raw)
        protos[proto.type] = proto
    common = None
    ops = {}
    for op_type in sorted(set(core.get_all_op_names()) | set(protos)):
        entry = {}
        proto = protos.get(op_type)
        extra = {}
        if proto is not None:
            marked = {a.name: [pb.AttrType.Name(a.type), _proto_default(proto.type, a)]
                      for a in proto.attrs if a.extra}
            # Every op proto ends with the same extra attributes (op_role, op_callstack...):
            # kept once, as "common_attrs".
            common = marked if common is None else {k: v for k, v in common.items() if k in marked}
            entry["inputs"] = [_slot(v) for v in proto.inputs]
            entry["outputs"] = [_slot(v) for v in proto.outputs]
            entry["attrs"] = {a.name: pb.AttrType.Name(a.type) for a in proto.attrs
                              if not a.extra}
            extra.update(marked)
        for name, value in core.get_op_extra_attrs(op_type).items():
            extra[name] = [_attr_type_as_written(op_type, name, value), value]
        entry["extra"] = extra
        _move_runtime_only(op_type, entry)
        ops[op_type] = entry
    for entry in ops.values():
        entry["extra"] = {k: v for k, v in sorted(entry["extra"].items()) if k not in common}
        if not entry["extra"]:
            del entry["extra"]
    return common, ops


# Attributes that only choose or tune a library (cuDNN, oneDNN, quantisation): runtime-only
# in meaning wherever they occur. Paddle marks them extra on most ops but declares them on a
# few (pool2d's use_cudnn); there they are listed as extra too, so kernels never declare them.
RUNTIME_ONLY = ("use_cudnn", "use_mkldnn", "use_onednn", "mkldnn_data_type", "onednn_data_type",
                "use_quantizer", "workspace_size_MB", "exhaustive_search")


def _move_runtime_only(op_type, entry):
    defaults = None
    for name in [n for n in entry.get("attrs", {}) if n in RUNTIME_ONLY]:
        if defaults is None:
            defaults = core.get_op_attrs_default_value(op_type.encode())
        entry["extra"][name] = [entry["attrs"].pop(name), defaults.get(name)]


LEGEND = ("ops: type -> inputs/outputs (slot names; suffix [] duplicable, ? dispensable, "
          "! intermediate; only ops with an OpProto, i.e. not the _grad ops), attrs (name -> "
          "AttrType, Paddle's declared attributes), extra (name -> [AttrType as Paddle writes "
          "it, Paddle's default]: runtime-only attributes, core.get_op_extra_attrs, plus OpProto attrs marked "
          "extra, plus declared attributes named in runtime_only); common_attrs: the extra "
          "attributes every op carries; runtime_only: names that only choose or tune a library")


def main():
    import paddle
    common, ops = collect()
    head = {"format": FORMAT, "paddle_version": paddle.__version__,
            "generated_by": "scripts/gen_paddle_op_data.py", "legend": LEGEND,
            "common_attrs": dict(sorted(common.items())), "runtime_only": sorted(RUNTIME_ONLY)}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"{json.dumps(key)}: {json.dumps(value, sort_keys=True)},")
    lines.append('"ops": {')
    items = sorted(ops.items())
    for k, (op_type, entry) in enumerate(items):
        comma = "," if k + 1 < len(items) else ""
        lines.append(f"{json.dumps(op_type)}: {json.dumps(entry, sort_keys=True)}{comma}")
    lines.append("}}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # the hand-joined lines are one valid document
    path = sys.argv[1] if len(sys.argv) > 1 else OUT
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{path}: {len(ops)} op types, {len(text)} bytes")


if __name__ == "__main__":
    main()
