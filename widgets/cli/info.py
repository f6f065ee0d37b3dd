"""``fluidscope info MODEL``: what a model file holds, read without running it.

Inputs (the ``feed`` ops' vars in col order; a program without feed ops, such as a
design, lists its ``data`` vars), outputs (the ``fetch`` ops' vars), op counts by type
and by phase over every block, parameters (counted from the ``.pdiparams`` next to the
program when there is one, else from the declared shapes), and the op types fluidscope
does not implement (the loaded model renders and converts; ``run`` refuses it).
"""
from __future__ import annotations

import collections
import json

import numpy as np

from fluidscope.engine import FluidscopeError, registry
from fluidscope.engine.io.inference import holder_names
from fluidscope.engine.ir import paddle_ops
from fluidscope.engine.ir.dtypes import dtype_name
from fluidscope.engine.ir.proto import framework_pb2 as pb
from fluidscope.engine.ir.roles import PHASES, phase_of

from ..render.text import describe_var_type, tensor_of
from . import models
from .verbs import add_verb

HOLDERS = ("feed", "fetch")
KIND_TEXT = {"binary": "binary ProgramDesc", "text": "text ProgramDesc", "design": "design"}


def add_parser(verbs):
    p = add_verb(verbs, "info", "inputs, outputs, op counts, parameters and unimplemented "
                                  "ops of a model", __doc__)
    p.add_argument("model", help="model.pdmodel, model.pbtxt, a path prefix (model) or "
                                 "design.fsdesign.json")
    p.add_argument("--json", action="store_true", help="print the facts as one JSON object")
    p.set_defaults(command=command)
    return p


def command(args):
    facts = collect(models.open_model(args.model))
    print(json.dumps(facts, indent=1) if args.json else describe(facts))
    return 0


# ------------------------------------------------------------------ facts
def var_facts(block, name):
    """name, shape (-1 unknown), dtype and LoD level of a block-0 var, for inputs/outputs."""
    var = next((v for v in block.vars if v.name == name), None)
    found = None if var is None else tensor_of(var)
    if found is None:
        return {"name": name, "shape": None, "dtype": None, "lod_level": 0,
                "type": describe_var_type(var) if var is not None else "undeclared"}
    tensor, lod_level, _ = found
    return {"name": name, "shape": list(tensor.dims), "dtype": dtype_text(tensor.data_type),
            "lod_level": lod_level, "type": describe_var_type(var)}


def dtype_text(data_type):
    try:
        return dtype_name(data_type)
    except FluidscopeError:  # bf16, complex...: no numpy dtype, still a Paddle name
        return pb.VarType.Type.Name(data_type).lower()


def inputs_outputs(model):
    """(input names, output names): the feed/fetch ops' vars in col order, or the ``data``
    vars (``need_check_feed``) of block 0 when the program has no feed ops."""
    desc = model.desc
    feeds = holder_names(model.path, desc, "feed")
    fetches = holder_names(model.path, desc, "fetch")
    if not feeds:
        feeds = [v.name for v in desc.blocks[0].vars if v.need_check_feed]
    return feeds, fetches


def op_facts(desc):
    """(count by type, count by phase, unimplemented type -> count) over every block,
    ``feed``/``fetch`` left out (they hold the model's inputs and outputs)."""
    by_type, by_phase, missing = collections.Counter(), collections.Counter(), []
    for block in desc.blocks:
        for op in block.ops:
            if op.type in HOLDERS:
                continue
            by_type[op.type] += 1
            by_phase[phase_of(op)] += 1
            if not registry.has(op.type):
                missing.append(op.type)
    error = paddle_ops.unimplemented_error(missing)
    return by_type, by_phase, ({} if error is None else error.counts)


def parameter_facts(model):
    """Counts of the persistable vars a ``.pdiparams`` holds: read from the file next to
    the program when there is one (checked against the program), else declared shapes
    (``values`` None when a declared shape has an unknown dim)."""
    specs = models.param_specs(model)
    facts = {"tensors": len(specs), "file": model.params_path}
    if model.params_path is not None:
        values = models.load_params(model)
        arrays = [np.asarray(getattr(v, "value", v)) for v in values.values()]
        facts.update(source="file", values=sum(a.size for a in arrays),
                     bytes=sum(a.nbytes for a in arrays))
        return facts
    sizes, nbytes = [], 0
    for _, data_type, dims in specs:
        if any(d < 0 for d in dims):
            sizes = None
            break
        size = int(np.prod(dims, dtype=np.int64))
        sizes.append(size)
        try:
            nbytes += size * np.dtype(dtype_name(data_type)).itemsize
        except FluidscopeError:
            nbytes = None
            break
    facts.update(source="declared", values=None if sizes is None else sum(sizes),
                 bytes=None if sizes is None or nbytes is None else nbytes)
    return facts


def collect(model) -> dict:
    """Every fact ``info`` reports, as JSON-ready data."""
    desc = model.desc
    feeds, fetches = inputs_outputs(model)
    by_type, by_phase, missing = op_facts(desc)
    block = desc.blocks[0]
    facts = {
        "file": model.path, "kind": model.kind, "blocks": len(desc.blocks),
        "inputs": [var_facts(block, n) for n in feeds],
        "outputs": [var_facts(block, n) for n in fetches],
        "op_count": sum(by_type.values()),
        "ops": dict(sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0]))),
        "phases": {p: by_phase[p] for p in PHASES if by_phase[p]},
        "parameters": parameter_facts(model),
        "unimplemented": missing,
    }
    if model.design is not None:
        facts["layers"] = len(model.design.nodes)
    return facts


# ------------------------------------------------------------------ text
def describe(facts) -> str:
    """The facts as the text ``info`` prints."""
    ops = facts["op_count"]
    head = (f"{facts['file']}: {KIND_TEXT[facts['kind']]}, {facts['blocks']} block"
            f"{'s' if facts['blocks'] > 1 else ''}, {ops} op{'s' if ops != 1 else ''}")
    if "layers" in facts:
        head += f" from {facts['layers']} layer nodes"
    lines = [head]
    for title, items, none in (("inputs", facts["inputs"], "none"),
                               ("outputs", facts["outputs"], "none (no fetch ops)")):
        lines.append(f"{title}:" + ("" if items else f" {none}"))
        width = max((len(v["name"]) for v in items), default=0)
        lines += [f"  {v['name']:<{width}}  {v['type']}" for v in items]
    phases = ", ".join(f"{n} {p}" for p, n in facts["phases"].items())
    lines.append(f"ops by type ({len(facts['ops'])} types; {phases or 'none'}):")
    width = max((len(t) for t in facts["ops"]), default=0)
    lines += [f"  {t:<{width}}  {n}" for t, n in facts["ops"].items()]
    lines.append("parameters: " + parameters_text(facts["parameters"]))
    missing = facts["unimplemented"]
    lines.append("unimplemented ops: none" if not missing else
                 f"unimplemented ops: {paddle_ops.unimplemented_message(missing)} "
                 f"(the model loads, renders and converts; `fluidscope run` refuses it)")
    return "\n".join(lines)


def parameters_text(p) -> str:
    if not p["tensors"]:
        return "none"
    values = "unknown" if p["values"] is None else f"{p['values']:,}"
    size = "unknown size" if p["bytes"] is None else size_text(p["bytes"])
    where = f"from {p['file']}" if p["source"] == "file" else "declared; no .pdiparams file"
    return f"{values} values in {p['tensors']} tensors, {size} ({where})"


def size_text(nbytes) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes:,} bytes ({nbytes / scale:.1f} {unit})"
    return f"{nbytes:,} bytes"


__all__ = ["add_parser", "command", "collect", "describe"]
