"""``fluidscope render MODEL [-o out.svg|out.dot] [--mode layers|ops|backward]``: draw a model.

The drawing is ``widgets.render.program_to_dot``'s: ``layers`` collapses each layer
(``op_namescope``) into one box, ``ops`` draws every forward op, ``backward`` adds the
gradient ops (a training program: a design with a loss, or a program saved with its
backward). SVG is laid out by Graphviz's ``dot``; ``.dot`` writes the DOT text (no
Graphviz needed); without ``-o`` the DOT text goes to stdout.
"""
from __future__ import annotations

import argparse
import os
import sys

from fluidscope.engine import FluidscopeError
from fluidscope.engine.ir.roles import BACKWARD, phase_of

from ..render import dot_to_svg, program_to_dot
from . import models, outputs
from .verbs import add_verb

# --mode -> program_to_dot arguments
MODES = {
    "layers": {"mode": "forward", "collapse": True},
    "ops": {"mode": "forward", "collapse": False},
    "backward": {"mode": "backward", "collapse": False},
}
OUTPUT_SUFFIXES = (".svg", ".dot", ".gv")


def output_path(text):
    """argparse type of ``-o``: a path ending in .svg, .dot or .gv."""
    if not text.lower().endswith(OUTPUT_SUFFIXES):
        raise argparse.ArgumentTypeError(
            f"'{text}' must end in .svg (laid out by Graphviz) or .dot/.gv (DOT text)")
    return text


def add_parser(verbs):
    p = add_verb(verbs, "render", "draw a model as SVG or DOT", __doc__)
    p.add_argument("model", help="model.pdmodel, model.pbtxt, a path prefix or "
                                 "design.fsdesign.json")
    p.add_argument("-o", "--output", type=output_path, metavar="FILE",
                   help="out.svg or out.dot (default: DOT text on stdout)")
    p.add_argument("--mode", choices=list(MODES), default="layers",
                   help="layers: one box per layer (default); ops: every forward op; "
                        "backward: forward and gradient ops")
    p.add_argument("--rankdir", choices=["TB", "LR", "BT", "RL"], default="TB",
                   help="layout direction (default TB, top to bottom)")
    p.set_defaults(command=command)
    return p


def command(args):
    model = models.open_model(args.model)
    if args.mode == "backward" and not any(
            phase_of(op) == BACKWARD for block in model.desc.blocks for op in block.ops):
        raise FluidscopeError(
            f"{model.path} has no gradient ops to draw (an inference model?); --mode "
            f"backward needs a training program, such as a design with a loss")
    dot = program_to_dot(model.desc, rankdir=args.rankdir, **MODES[args.mode])
    if args.output is None:
        sys.stdout.write(dot)
        return 0
    outputs.check_target(args.output)
    text = dot_to_svg(dot) if args.output.lower().endswith(".svg") else dot
    outputs.write_text(args.output, text)
    print(f"wrote {args.output} ({args.mode}, {os.path.getsize(args.output):,} bytes)")
    return 0


__all__ = ["MODES", "add_parser", "command"]
