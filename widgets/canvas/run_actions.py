"""The canvas actions that use the design rather than edit it: graph, train, debug, export.

``show_graph`` / ``train`` / ``debug`` open a GraphView / TrainingMonitor / DebuggerView
in ``canvas.panel`` (below the editor). They build the full program (forward, backward
and optimizer: ``design.build(scope=canvas.scope)``) and keep the weights in
``canvas.scope``: a rebuild after an edit keeps every value the edit did not touch
(``Build.initialise`` only (re)initialises new or reshaped parameters), so training
goes on where it was. What ``train`` and ``debug`` feed is set from Python::

    canvas.reader = reader            # a function returning batches (feed dicts), or a list
    canvas.feed_names = ["x", "y"]    # when batches are tuples (optional)
    canvas.feeder = to_feed           # or a function batch -> feed dict (optional)
"""
from __future__ import annotations

import os

from fluidscope import designer as fd
from fluidscope.engine import DesignError, FluidscopeError
from fluidscope.engine.training.reader import open_epoch, to_feed

from ..base import action
from ..debugger import DebuggerView
from ..graph import GraphView
from ..render import dot_to_svg, has_dot, program_to_dot
from ..training import TrainingMonitor, train as train_loop

EXPORT_PREFIX = "model"


class RunActions:
    """Mixed into DesignCanvas; uses its ``_design``, ``open_view``, ``status``."""

    def _init_run_state(self):
        self.reader = None
        self.feed_names = None
        self.feeder = None
        self.scope = fd.Scope()
        self.executor = fd.Executor(fd.CPUPlace())
        self.training = None
        self.clipboard = None

    def full_build(self, need_loss=True):
        """The design built for running: weights initialised in ``scope``. DesignError
        listing the nodes that failed (or the missing loss)."""
        built = self._design.build(scope=self.scope)
        problems = [f"{n}: {m}" for n, m in built.errors.items()]
        if built.optimizer_error:
            problems.append(built.optimizer_error)
        if problems:
            raise DesignError("the design does not build: " + "; ".join(problems))
        if need_loss and built.loss is None:
            raise DesignError("mark a loss first (design.set_loss(node))")
        built.initialise(self.executor, self.scope)
        return built

    @action()
    def show_graph(self):
        """Open a GraphView of the built program below the canvas."""
        built = self._design.build(scope=self.scope)
        view = self.open_view("graph", GraphView(built.main))
        self.status = f"graph of {len(built.main.global_block().ops)} ops"
        return view

    @action(epochs=int)
    def train(self, reader=None, epochs=1):
        """Train on ``reader`` (default ``canvas.reader``) with a TrainingMonitor below
        the canvas. Returns the TrainingRun (in a kernel it runs in the background)."""
        reader = reader if reader is not None else self.reader
        if reader is None:
            raise FluidscopeError("train: set canvas.reader (a function returning batches, "
                                  "each a feed dict) or pass reader=")
        if self._design.document.optimizer is None:
            raise DesignError("train: choose an optimizer first, e.g. "
                              "canvas.design.set_optimizer('Adam', learning_rate=1e-3)")
        built = self.full_build()
        monitor = TrainingMonitor()
        self.open_view("training", monitor)
        self.link_training(monitor)  # the live loss on the loss node
        self.training = train_loop(self.executor, built.main, reader, epochs,
                                   fetch_list=[built.loss], feed_names=self.feed_names,
                                   feeder=self.feeder, scope=self.scope, monitor=monitor)
        self.status = f"training for {epochs} epoch(s)"
        return self.training

    @action()
    def debug(self, feed=None):
        """Open a DebuggerView stepping the built program on ``feed`` (default: the first
        batch of ``canvas.reader``), paused before its first op."""
        if feed is None:
            if self.reader is None:
                raise FluidscopeError("debug: pass feed= or set canvas.reader")
            batch = next(iter(open_epoch(self.reader, 0)), None)
            if batch is None:
                raise FluidscopeError("debug: the reader gave no batch")
            feed = to_feed(batch, self.feeder, self.feed_names, lambda: "the first batch")
        built = self.full_build(need_loss=False)
        fetch = [built.loss] if built.loss is not None else None
        session = self.executor.debug(built.main, feed, fetch, self.scope)
        view = self.open_view("debugger", DebuggerView(session))
        self.link_debugger(view)  # each stop lights its layer on the canvas
        self.status = f"debugging {len(built.main.global_block().ops)} ops"
        return view

    @action(folder=str)
    def export(self, folder):
        """Write into ``folder``: model.pdmodel + model.pdiparams (the inference program
        from the data inputs to the loss, or to the last layer, with the weights of
        ``scope``), model.pbtxt (that program as text), model.svg (its graph), model.py
        (code rebuilding the design) and model.fsdesign.json (the design). Returns the
        paths written."""
        built = self.full_build(need_loss=False)
        feeds, fetches = self._export_ends(built)
        os.makedirs(folder, exist_ok=True)
        prefix = os.path.join(folder, EXPORT_PREFIX)
        with fd.scope_guard(self.scope):
            pruned = fd.io.save_inference_model(prefix, feeds, fetches, self.executor,
                                                program=built.main)
        written = [prefix + ".pdmodel", prefix + ".pdiparams"]
        fd.io.save_program(pruned, prefix + ".pbtxt")
        written.append(prefix + ".pbtxt")
        if has_dot():
            _write_text(prefix + ".svg", dot_to_svg(program_to_dot(pruned, mode="forward")))
            written.append(prefix + ".svg")
        _write_text(prefix + ".py", self._design.to_python())
        written.append(prefix + ".py")
        self._design.save(prefix + ".fsdesign.json")
        written.append(prefix + ".fsdesign.json")
        names = ", ".join(os.path.basename(p) for p in written)
        skipped = "" if has_dot() else " (model.svg skipped: Graphviz's dot is not installed)"
        self.status = f"exported {len(written)} files to {folder}: {names}{skipped}"
        return written

    def _export_ends(self, built):
        """(feed names, fetch Variables): the top-level data nodes the outputs need; the
        loss, or the last top-level node that built."""
        doc = self._design.document
        if built.loss is not None:
            end = doc.loss.node
            fetches = [built.loss]
        else:
            last = [n for n in doc.graph.nodes if n in built.outputs
                    and doc.graph.nodes[n].layer != "data"]
            if not last:
                raise DesignError("export: the design has no layer to export")
            end = last[-1]
            fetches = [built.outputs[end][0]]
        needed = _upstream(doc.graph, end)
        feeds = [n for n, node in doc.graph.nodes.items() if node.layer == "data" and n in needed]
        return feeds, fetches


def _upstream(graph, node_id):
    """Ids of the top-level nodes ``node_id`` reads, itself included (through zones'
    in-links and boots too)."""
    seen, todo = set(), [node_id]
    while todo:
        nid = todo.pop()
        if nid in seen or nid not in graph.nodes:
            continue
        seen.add(nid)
        node = graph.nodes[nid]
        todo += [ref.node for _, ref in node.refs()]
        for inner in (node.body.nodes.values() if node.body is not None else ()):
            todo += [ref.node for _, ref in inner.refs()]  # refs out of the step count
    return seen


def _write_text(path, text):
    """Through a temporary file and a rename, like every other file fluidscope writes."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
