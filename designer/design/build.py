"""Build a design: replay its nodes through the layer functions a Python user calls.

Nodes are built in dependency order (document order among independent ones), each
by calling its layer function with its inputs' Variables, its attributes and
``name=<node id>``, inside ``design_guard`` (names counted from 0, no source lines),
so the ProgramDesc equals the one the same calls in code build (codegen.py writes
those calls). A node that fails is rolled back (its half-built ops and variables
removed), its error kept under its id, and the nodes that need it are marked as
waiting on it; everything else is still built and shaped.
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools

from fluidscope.engine import DesignError, FluidscopeError

from .. import callsite, framework, layers, optimizer, unique_name
from ..layers import op_node
from .document import EMPTY, GROUP, LINK_SLOT, MEMORY, MIXED, STEP_INPUT, order
from . import weights


@contextlib.contextmanager
def design_guard(main, startup):
    """Build into ``main``/``startup`` the way a design build does: names counted from 0
    and no source lines in ``op_callstack`` (the design, not a file, is the source)."""
    with framework.program_guard(main, startup), unique_name.guard(), \
            unique_name.journal(), callsite.no_source_lines():
        yield


@dataclasses.dataclass
class Build:
    """The result of ``Design.build()``.

    main, startup: the programs; errors: node id -> message; waiting: node id -> the
    failed node it waits on; shapes: node id -> [shape of each output]; reinitialised:
    persistable names the startup program must (re)initialise in the scope (new or
    reshaped), see ``initialise``; optimizer_error: why no optimizer ops were added."""
    main: framework.Program
    startup: framework.Program
    errors: dict = dataclasses.field(default_factory=dict)
    waiting: dict = dataclasses.field(default_factory=dict)
    shapes: dict = dataclasses.field(default_factory=dict)
    outputs: dict = dataclasses.field(default_factory=dict)   # node id -> [Variable]
    loss: object = None
    optimizer_error: str | None = None
    reinitialised: list = dataclasses.field(default_factory=list)

    @property
    def ok(self):
        return not self.errors and not self.waiting and self.optimizer_error is None

    def var(self, node_id, index=0):
        """The Variable of output ``index`` of a node."""
        if node_id in self.errors or node_id in self.waiting:
            cause = self.errors.get(node_id) or f"it waits on '{self.waiting[node_id]}'"
            raise DesignError(f"node '{node_id}' was not built: {cause}")
        try:
            return self.outputs[node_id][index]
        except (KeyError, IndexError):
            raise DesignError(f"node '{node_id}' has no output {index}") from None

    def initialise(self, executor=None, scope=None):
        """Run the startup ops of ``reinitialised`` only: new and reshaped parameters get
        their initial values, every other value in ``scope`` is kept. Returns the names."""
        return weights.initialise(self, executor, scope)


class _StepFailed(Exception):
    """An inner node of a recurrent step failed (already recorded); stop the step."""


def build(doc, scope=None, optimize=True, cache=None) -> Build:
    """Build ``doc`` into fresh programs; see the module docstring. ``optimize`` False:
    the forward program only (shapes and errors, what a canvas needs per gesture);
    ``cache``: a ``NodeCache`` to reuse what unchanged nodes built last time."""
    result = Build(framework.Program(), framework.Program())
    if cache is not None:
        cache.begin()
    with design_guard(result.main, result.startup):
        env = {}
        _build_graph(doc.graph, env, {}, result, inner=False, cache=cache)
        if cache is not None:
            cache.flush(result)
        if optimize:
            _minimize(doc, env, result)
        elif doc.loss is not None and env.get(doc.loss.node) is not None:
            result.loss = _resolve(doc.loss, env, doc.graph.nodes[doc.loss.node], "loss")
    if cache is not None:
        cache.finish()
    result.reinitialised = weights.changed(result, scope)
    return result


def _build_graph(graph, env, outer_env, result, inner, cache=None):
    ids, cyclic = order(graph)
    for nid in cyclic:
        result.errors[nid] = f"node '{nid}' is on a cycle that is not through a memory"
    skip = 0
    for position, nid in enumerate(ids):
        if skip:
            skip -= 1
            continue
        if cache is not None:
            # a stretch of nodes the last build went through unchanged, in one step
            skip = cache.replay_run(ids, position, graph.nodes, env, result)
            if skip:
                skip -= 1
                continue
        node = graph.nodes[nid]
        if node.layer == STEP_INPUT:
            continue  # bound to the step's arguments by the group
        blocker = _blocker(node, env, outer_env, result)
        if blocker is not None:
            result.waiting[nid] = blocker
            if inner:
                raise _StepFailed(nid)
            if cache is not None:
                cache.interrupt()
            continue
        key = cache.key(node, env, outer_env) if cache is not None else None
        outs = cache.replay(key, nid, result) if key is not None else None
        if outs is not None:
            env[nid] = outs
            continue
        if cache is not None:
            cache.flush(result)  # the layer reads and appends to the real programs
        checkpoint = _Checkpoint(result.main, result.startup)
        # the nodes built from here on are the ones after these sizes (keys are only
        # added, and a failed attempt removes only its own): no per-node copy of the ids
        shapes_before, outputs_before = len(result.shapes), len(result.outputs)
        try:
            outs = _build_node(node, env, outer_env, result)
        except _StepFailed:
            checkpoint.restore()
            _forget_outputs(result, outputs_before)
            result.errors[nid] = f"recurrent_group '{nid}': its step has an error (see its nodes)"
            if cache is not None:
                cache.interrupt()
            continue
        except Exception as exc:  # noqa: BLE001  a design must build around any failing node
            checkpoint.restore()
            _forget_outputs(result, outputs_before)
            text = str(exc) if isinstance(exc, FluidscopeError) else f"{type(exc).__name__}: {exc}"
            result.errors[nid] = text if nid in text else f"{node.layer} layer '{nid}': {text}"
            if inner:
                raise _StepFailed(nid) from None
            if cache is not None:
                cache.interrupt()
            continue
        env[nid] = outs
        result.outputs[nid] = outs
        result.shapes[nid] = [list(v.shape) for v in outs]
        if cache is not None:
            cache.store(nid, key, checkpoint, result, shapes_before, outputs_before)


def _forget_outputs(result, kept):
    """Drop the Variables of nodes built during a failed attempt (the inner nodes of a
    step that failed further on; ``kept``: how many entries came before it): the
    checkpoint removed their block, so they would be views of nothing. Their shapes
    stay: they are plain lists and still what was built."""
    for nid in list(itertools.islice(reversed(result.outputs), len(result.outputs) - kept)):
        del result.outputs[nid]


def _blocker(node, env, outer_env, result):
    """The failed node ``node`` waits on (root cause), or None."""
    outer = ("outer", "boot_layer") if node.layer in (STEP_INPUT, MEMORY) else ()
    for slot, ref in node.refs(ordering=True):
        if ref.node == EMPTY and node.layer == "op":
            continue
        if (outer_env if slot in outer else env).get(ref.node) is None:
            return result.waiting.get(ref.node, ref.node)
    return None


def _resolve(ref, env, node, slot):
    if ref.node == EMPTY and node.layer == "op":
        return EMPTY
    outs = env[ref.node]
    if ref.index >= len(outs):
        raise DesignError(f"{node.layer} layer '{node.id}': input '{slot}' takes output "
                          f"{ref.index} of '{ref.node}', which has {len(outs)} output(s)")
    return outs[ref.index]


def _arguments(node, env, slot_refs, spec_inputs):
    kwargs = {}
    for slot, value in slot_refs.items():
        kwargs[slot] = ([_resolve(r, env, node, slot) for r in value] if isinstance(value, list)
                        else _resolve(value, env, node, slot))
    for slot in spec_inputs:
        if not slot.optional and slot.kind not in ("rows", "group") and slot.name not in kwargs:
            raise DesignError(f"{node.layer} layer '{node.id}': input '{slot.name}' is not "
                              "connected")
    return kwargs


def _build_node(node, env, outer_env, result):
    from .. import layer_specs as catalog
    if node.layer == MEMORY:
        return [_build_memory(node, outer_env)]
    spec = catalog.get(node.layer)
    if node.layer == "op":
        inputs = _arguments(node, env, node.inputs, ())
        if node.body is None:
            return layers.op(inputs=inputs, name=node.id, **node.attrs)
        with op_node.op_block() as block:
            # a sub-block reads its own variables, then the enclosing blocks' (and a
            # gradient block its forward block's: any node built so far)
            _build_graph(node.body, collections.ChainMap({}, env, result.outputs), outer_env,
                         result, inner=True)
        return layers.op(inputs=inputs, block=block, name=node.id, **node.attrs)
    kwargs = _arguments(node, env, node.inputs, spec.inputs)
    kwargs.update(node.attrs)
    if node.layer == MIXED:
        kwargs["input"] = [_build_row(node, k, row, env) for k, row in enumerate(node.rows)]
    if node.layer == GROUP:
        return _build_group(node, env, result)
    kwargs["name"] = node.id
    out = getattr(layers, node.layer)(**kwargs)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _build_row(node, index, row, env):
    from .. import layer_specs as catalog
    spec = catalog.get(row.kind)
    try:
        kwargs = _arguments(node, env, row.inputs, spec.inputs)
    except DesignError as exc:
        raise DesignError(f"{exc} (row {index}, {row.kind})") from None
    return getattr(layers, row.kind)(**kwargs, **row.attrs)


def _build_memory(node, outer_env):
    link = node.inputs.get(LINK_SLOT)
    if link is None:
        raise DesignError(f"memory '{node.id}': link it to the inner node it remembers")
    boot = node.inputs.get("boot_layer")
    boot_var = None if boot is None else _resolve(boot, outer_env, node, "boot_layer")
    return layers.memory(link.node, boot_layer=boot_var, **node.attrs)


def _build_group(node, env, result):
    body = node.body
    step_inputs = [n for n in body.nodes.values() if n.layer == STEP_INPUT]
    if not step_inputs or not body.outputs:
        raise DesignError(f"recurrent_group '{node.id}': needs at least one step input "
                          "(add_step_input) and one out-link (set_outputs)")
    inputs = []
    for p in step_inputs:
        if "outer" not in p.inputs:  # cleared on the canvas, to be wired again
            raise DesignError(f"recurrent_group '{node.id}': step input '{p.id}' has no "
                              "source; connect the outer sequence it steps through")
        v = _resolve(p.inputs["outer"], env, p, "outer")
        inputs.append(layers.StaticInput(v) if p.attrs.get("static") else v)

    def step(*args):
        inner = {p.id: [a] for p, a in zip(step_inputs, args)}
        for p, a in zip(step_inputs, args):
            result.shapes[p.id] = [list(a.shape)]
        _build_graph(body, inner, env, result, inner=True)
        outs = [_resolve(r, inner, node, "outputs") for r in body.outputs]
        return outs[0] if len(outs) == 1 else outs

    out = layers.recurrent_group(step, inputs, name=node.id, **node.attrs)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _minimize(doc, env, result):
    if doc.loss is None:
        return
    if env.get(doc.loss.node) is None:
        result.optimizer_error = f"the loss node '{doc.loss.node}' was not built"
        return
    result.loss = _resolve(doc.loss, env, doc.graph.nodes[doc.loss.node], "loss")
    if doc.optimizer is None:
        return
    settings = {k: v for k, v in doc.optimizer.items() if k != "type"}
    checkpoint = _Checkpoint(result.main, result.startup)
    try:
        getattr(optimizer, doc.optimizer["type"])(**settings).minimize(result.loss)
    except Exception as exc:  # noqa: BLE001  reported, the forward program stays usable
        checkpoint.restore()
        result.optimizer_error = f"optimizer {doc.optimizer['type']}: {exc}"


class _Checkpoint:
    """Sizes of two programs, to remove what a failing layer half-built."""

    def __init__(self, *programs):
        self.names_mark = unique_name.mark()  # the name counters advanced since: store
        self.saved = [(p, p.size_marks(), len(p.layer_calls), dict(p.param_learning_rates))
                      for p in programs]

    def restore(self):
        for program, marks, calls, rates in self.saved:
            program.truncate(marks)
            del program.layer_calls[calls:]
            program.param_learning_rates = rates

