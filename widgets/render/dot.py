"""Program -> Graphviz DOT: the graph view of a ProgramDesc, as a pure function.

``program_to_dot`` reads a ProgramDesc (or anything with ``.desc``, such as a designer
Program) and returns DOT source built with the ``graphviz`` package; it writes no file
and displays nothing, so tests assert on the text and a system Graphviz is optional.
``dot_to_svg`` lays the source out with the system ``dot`` when there is one.

Drawing conventions:

* ops are boxes filled by their ``op_role`` attribute (forward 0, backward 1,
  optimize 2, the loss bit 256); a legend lists the roles drawn;
* variables are ellipses labelled ``name`` and ``[dims] dtype`` (``-1`` shown as
  ``?``); parameters and other persistable vars are cylinders, gradients
  (``@GRAD``) dashed and red; edges carry the var's shape (``[?, 128] lod 1``), or the
  shape a run gave it (``shapes=``, in blue);
* an op owning sub-blocks (a BLOCK/BLOCKS attribute such as ``sub_block``) sits in a
  dashed cluster together with one nested cluster per sub-block; a recurrent op's step
  block shows its memories (dashed, state -> ex_state) and boot links (solid),
  ``recurrent_grad``'s grad block its memory gradients (``recurrent``);
* the backward mirrors the forward: gradient edges point back up the graph, and a
  dotted line joins each grad op to the forward op it is the gradient of
  (``pairs``);
* a layer (``op_namescope``) can be collapsed into one box (``groups``);
* ``feed``/``fetch`` ops are small house shapes and their holder vars are not drawn.

Node names are ``op_<block>_<idx>``, ``var_<block>_<escaped name>`` (the block that
declares the var) and ``group_<block>_<escaped namescope>``; each node's ``id``
attribute is the selection key the widgets use: ``op:<block>:<idx>``,
``var:<block>:<name>`` or ``group:<block>:<namescope>`` (``@GRAD`` appended for a
layer's grad ops); see ``keys.NodeKey``.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass

import graphviz

from fluidscope.engine.errors import FluidscopeError

from .drawing import LARGE_GRAPH_ATTRS, Drawing, Options
from .emit import emit, legend as _legend
from .groups import Folding
from .highlight import highlight_path
from .shapes import normalize_shapes
from .text import MODES

_RANKDIRS = ("TB", "LR", "BT", "RL")


def _flag(name, value):
    if not isinstance(value, bool):
        raise FluidscopeError(f"program_to_dot: {name} must be True or False, got {value!r}")
    return value


@dataclass(frozen=True)
class Rendering:
    """What one rendering drew, besides its DOT text.

    dot : the DOT source (``program_to_dot``'s result)
    ops : {(block, op index): drawn node key} of every op drawn, alone or in a box
    vars : the var node keys drawn
    current : the node key marked as the position (None: none)
    current_note : set when ``current`` stands in for an op this mode does not draw
    internal : names of outputs kept for backward only that are hidden (XShape, ...)
    """

    dot: str
    ops: dict
    vars: frozenset
    current: str | None
    current_note: str
    internal: frozenset


def program_to_dot(program, *, block=0, mode="all", highlight=None, show_shapes=True,
                   rankdir="TB", legend=True, edge_labels=True, shapes=None, collapse=None,
                   expand=None, pair_grads=True, show_internal=False) -> str:
    """DOT source of ``program`` (a Program or a ProgramDesc).

    Parameters
    ----------
    block : int
        The block drawn at top level; blocks reachable through sub-block attributes
        are nested inside their owner op's cluster.
    mode : {"forward", "backward", "all"}
        Forward ops only; forward and backward; or everything incl. optimizer ops
        (``MODE_LABELS`` has their names for a switch). Only the variables the drawn
        ops touch (and vars no op uses) are drawn.
    highlight : None, int, (block, int), "op:<block>:<idx>", or a path
        The debugger's position: an op index in ``block``, ``(block, idx)``, or the
        path from the outermost op inwards, ``[(0, 5), (1, 2)]`` = op 2 of block 1 run
        inside recurrent op 5 of block 0. The innermost op drawn gets a thick red
        border, the ops it is inside a light one (an op inside a collapsed layer
        lights up the layer's box). Ops the program lacks are not highlighted.
    show_shapes : bool
        Put ``[dims] dtype`` under each variable's name.
    rankdir : {"TB", "LR", "BT", "RL"}
        Graphviz layout direction.
    legend : bool
        Add a small legend of the op roles drawn.
    edge_labels : bool
        Label each var <-> op edge with the var's shape and LoD level.
    shapes : mapping or None
        Live shapes that replace the declared ones on edges: var name (or
        ``var:<block>:<name>``) -> ``(shape, lod level or LoD)``, a shape, a LoDTensor
        or an array (``shapes``).
    collapse : None, bool or set of namescopes
        Draw layers as one box each: True every top-level namescope, a set those
        listed ("fc_0", "/encoder/"), False none. None: False, unless ``expand`` is
        given (then True).
    expand : None or set of namescopes
        Namescopes drawn open even though ``collapse`` covers them (``groups``).
    pair_grads : bool
        Join each grad op to its forward op with a dotted line (modes with gradients).
    show_internal : bool
        Draw the outputs an op keeps only for its backward (output slots the registry
        marks intermediate: XShape, SavedMean, ...); hidden by default.
    """
    return render_program(program, block=block, mode=mode, highlight=highlight,
                          show_shapes=show_shapes, rankdir=rankdir, legend=legend,
                          edge_labels=edge_labels, shapes=shapes, collapse=collapse,
                          expand=expand, pair_grads=pair_grads,
                          show_internal=show_internal).dot


def render_program(program, *, block=0, mode="all", highlight=None, show_shapes=True,
                   rankdir="TB", legend=True, edge_labels=True, shapes=None, collapse=None,
                   expand=None, pair_grads=True, show_internal=False) -> Rendering:
    """``program_to_dot`` with what it drew (a ``Rendering``): the same arguments."""
    desc = getattr(program, "desc", program)
    if not hasattr(desc, "blocks"):
        raise FluidscopeError(
            f"program_to_dot: expected a Program or a ProgramDesc, got {type(program).__name__}")
    if mode not in MODES:
        raise FluidscopeError(f"program_to_dot: mode must be one of {list(MODES)}, got {mode!r}")
    if rankdir not in _RANKDIRS:
        raise FluidscopeError(f"program_to_dot: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    if isinstance(block, bool) or not isinstance(block, int) or not 0 <= block < len(desc.blocks):
        raise FluidscopeError(
            f"program_to_dot: block {block!r} does not exist (the program has "
            f"{len(desc.blocks)} block(s))")
    if collapse is not None and not isinstance(collapse, bool) and not collapse:
        collapse = False  # an empty set collapses nothing
    folding = Folding(collapse, expand)
    folding.check_known(desc)
    options = Options(
        mode=mode, highlight=highlight_path(highlight, block),
        show_shapes=_flag("show_shapes", show_shapes),
        edge_labels=_flag("edge_labels", edge_labels),
        shapes=normalize_shapes(shapes), folding=folding,
        pair_grads=_flag("pair_grads", pair_grads),
        show_internal=_flag("show_internal", show_internal))
    drawing = Drawing(desc, block, options)
    drawing.collect()
    g = graphviz.Digraph(
        name="program",
        graph_attr={"rankdir": rankdir, "fontname": "Helvetica", "fontsize": "10",
                    "nodesep": "0.25", "ranksep": "0.3", "id": "program"},
        node_attr={"shape": "box", "fontname": "Helvetica", "fontsize": "10",
                   "height": "0.3", "margin": "0.08,0.03"},
        edge_attr={"arrowsize": "0.6", "color": "#555555", "fontname": "Helvetica",
                   "fontsize": "7", "fontcolor": "#555555"})
    if drawing.large:
        g.graph_attr.update(LARGE_GRAPH_ATTRS)
    emit(drawing, g)
    if legend and drawing.roles_drawn:
        _legend(g, drawing.roles_drawn, *drawing.legend_kinds())
    return Rendering(g.source, dict(drawing.rep), frozenset(drawing.var_nodes),
                     drawing.current, drawing.current_note,
                     frozenset(drawing.internal_outputs))


def has_dot() -> bool:
    """True when Graphviz's ``dot`` program is on the PATH."""
    return shutil.which("dot") is not None


def dot_to_svg(dot_source: str, engine: str = "dot") -> str:
    """Lay ``dot_source`` out with the system Graphviz; returns the ``<svg ...>`` element
    (the XML prolog and doctype are dropped so it can be put into a page as is).

    Raises FluidscopeError when Graphviz is not installed or rejects the source."""
    try:
        out = graphviz.Source(dot_source, engine=engine).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise FluidscopeError(
            "Graphviz's `dot` program is not installed, so the graph cannot be laid out "
            "here: install it (apt-get install graphviz, brew install graphviz or conda "
            "install graphviz), or use the DOT text from program_to_dot") from None
    except graphviz.CalledProcessError as exc:
        stderr = exc.stderr
        if isinstance(stderr, bytes):
            stderr = stderr.decode(errors="replace")
        raise FluidscopeError(f"Graphviz could not lay out the graph: {stderr or exc}") from None
    start = out.find("<svg")
    return out[start:] if start >= 0 else out


__all__ = ["program_to_dot", "render_program", "Rendering", "dot_to_svg", "has_dot"]
