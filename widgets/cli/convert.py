"""``fluidscope convert SOURCE TARGET``: one model file to another, by their suffixes.

SOURCE: a program (``.pdmodel``, ``.pbtxt``, a path prefix) or a design
(``.fsdesign.json``). TARGET:

* ``.pdmodel`` (binary, what Paddle and Netron read) or ``.pbtxt`` (text): the program;
  a design gives its built main program (with backward and optimizer ops when it has a
  loss and an optimizer). A program's ``.pdiparams`` is copied next to TARGET (checked
  against the program on the way), so the converted model runs as the original did;
* ``.fsdesign.json``: the design (a program file becomes one node per op);
* ``.py``: a readable script that rebuilds the same program (``designer.codegen``).

Nothing read is executed: ``.py`` is only ever written, never read.
"""
from __future__ import annotations

import argparse
import os

from fluidscope.designer import Design
from fluidscope.engine import io as engine_io

from . import models, outputs
from .verbs import add_verb


def target_kind(path):
    """"program", "design" or "python" for a TARGET's suffix."""
    if models.is_design_path(path):
        return "design"
    if path.endswith(".py"):
        return "python"
    if path.endswith(models.PROGRAM_SUFFIXES):
        return "program"
    return None


def target_path(text):
    """argparse type of TARGET: a path whose suffix says what to write."""
    if target_kind(text) is None:
        raise argparse.ArgumentTypeError(
            f"'{text}': unknown target type; use .pdmodel or .pbtxt (a program), "
            f".fsdesign.json (a design) or .py (Python that rebuilds it)")
    return text


def add_parser(verbs):
    p = add_verb(verbs, "convert", "convert between .pdmodel, .pbtxt, .fsdesign.json and .py",
                 __doc__)
    p.add_argument("source", help="model.pdmodel, model.pbtxt, a path prefix or "
                                  "design.fsdesign.json")
    p.add_argument("target", type=target_path,
                   help="out.pdmodel, out.pbtxt, out.fsdesign.json or out.py")
    p.set_defaults(command=command)
    return p


def command(args):
    model = models.open_model(args.source)
    kind = target_kind(args.target)
    outputs.check_target(args.target)
    written = [args.target]
    if kind == "program":
        # Parameters are read (and checked) before anything is written.
        values = models.load_params(model)
        engine_io.save_program(model.desc, args.target)
        params = models.params_path_of(args.target)
        if values and os.path.abspath(params) != os.path.abspath(model.params_path):
            engine_io.save_params(params, values)
            written.append(params)
    else:
        design = model.design or Design.from_program(model.program)
        if kind == "design":
            design.save(args.target)
        else:
            outputs.write_text(args.target, design.to_python())
    print("wrote " + ", ".join(written))
    return 0


__all__ = ["target_kind", "add_parser", "command"]
