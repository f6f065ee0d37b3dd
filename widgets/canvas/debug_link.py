"""The canvas linked to a debugger session and a training run: the current layer lit.

``canvas.debug()`` links the DebuggerView it opens; ``canvas.link_debugger(view_or_session)``
links any session over the program built from this design. From then on every stop of
the session, however it was driven (the view's buttons, ``view.step()``, a Python loop
over ``session.step_into()``), reaches ``DebugLink.on_stop`` through the session's
``listeners`` and becomes the ``link_state`` trait: the node owning the op just run
(``op_owners.py``: the op's layer, grad ops included), the phase (forward/backward: the
front end colours them apart), and inside a recurrent zone the zone and the frame
(t of T). Stops closer together than ``min_interval_s`` are published only as the
last of them (a trailing publish after the interval, by one thread per link), so a
loop of thousands of steps costs an attribute test per step, not a front-end message
(benchmarks/debug_link.py).

While paused, ``inspect_port`` reads an output's value (shape, min/mean/max) for the
port under the pointer; ``run_to_here`` runs the session to the end of a node's layer;
selecting a node on the canvas selects its output in the debugger and back. A training
run's live loss shows on the loss node (``link_state["loss"]``).
"""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import traitlets

from fluidscope.engine import DesignError, FluidscopeError

from ..base import action
from ..keys import NodeKey
from .op_owners import op_owners

MIN_INTERVAL_S = 0.05


class DebugLink:
    """Follows one session for one canvas (see the module docstring)."""

    def __init__(self, canvas, session, view=None, min_interval_s=MIN_INTERVAL_S):
        self.canvas, self.session, self.view = canvas, session, view
        self.table = op_owners(session.program, canvas.design.document.ids())
        self.min_interval_s = min_interval_s
        self.stops = 0            # stops seen
        self.published = 0        # states sent to the front end
        self._last_publish = float("-inf")
        self._dirty = False       # a stop not published yet (a trailing publish is due)
        self._worker, self._wake, self._closed = None, threading.Event(), False
        self._lock = threading.Lock()
        session.listeners.append(self.on_stop)
        self.on_stop(session)

    # ------------------------------------------------------------- following
    def state(self) -> dict:
        """Where the session stands, as the canvas draws it."""
        session = self.session
        pos = session.position
        state = {"active": True, "finished": session.finished, "node": None,
                 "phase": pos.phase, "op": pos.op_type or "", "zone": None, "frame": None,
                 "frames": None, "position": pos.breadcrumb()}
        if pos.op_index is None:
            return state
        state["node"] = self.table.node_of(pos.block, pos.op_index)
        if pos.parent is not None:
            state["zone"] = self.table.node_of(pos.parent.block, pos.parent.op_index)
            cursor = session.stepper.cursor
            if cursor is not None:
                state["frame"], state["frames"] = int(cursor.t), len(cursor.order)
        return state

    def on_stop(self, _session=None):
        """A stop of the session: published now when the interval has passed, else by
        the trailing publish already due (then a stop costs one attribute test)."""
        self.stops += 1
        if self._dirty:
            return
        now = time.perf_counter()
        if now - self._last_publish >= self.min_interval_s:
            self._publish(now)
            return
        self._dirty = True
        if self.min_interval_s < 60:  # a longer interval: flush() by hand (tests)
            self._wake_worker()

    def _wake_worker(self):
        # one thread per link, started once: starting a thread per interval waits for it
        # to be scheduled, which on a loaded machine cost the stepping loop milliseconds
        if self._worker is None:
            self._worker = threading.Thread(target=self._trail, daemon=True,
                                            name="fluidscope-debug-link")
            self._worker.start()
        self._wake.set()

    def _trail(self):
        """The trailing publisher: each wake-up, wait out the interval, then publish."""
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            time.sleep(max(0.0, self.min_interval_s - (time.perf_counter() - self._last_publish)))
            self._trailing()

    def _trailing(self):
        # The state is read here, after the stops it stands for. A stop that lands while
        # it is read (the session stepped on) gets another publish an interval later, so
        # the last stop of a loop is always the one left on the canvas.
        with self._lock:
            if not self._dirty or self._closed:
                return
            seen = self.stops
            self._dirty = False
            self._publish(time.perf_counter())
            if self.stops != seen:
                self._dirty = True
                self._wake.set()

    def flush(self):
        """Publish the last stop now if it has not been."""
        with self._lock:
            if self._dirty:
                self._dirty = False
                self._publish(time.perf_counter())

    def _publish(self, now):
        self._last_publish = now
        self.published += 1
        self.canvas.set_link_state(self.state())

    def close(self):
        with contextlib.suppress(ValueError):
            self.session.listeners.remove(self.on_stop)
        with self._lock:
            self._closed, self._dirty = True, False
        self._wake.set()

    # ---------------------------------------------------------------- actions
    def run_to_end_of(self, node_id):
        """Run the session until the last op of ``node_id``'s next run of ops has run
        (the end of that layer; in a zone's step: in the next frame that runs it)."""
        ops = self.table.ops_of(node_id)
        if not ops:
            raise DesignError(f"run_to_here: node '{node_id}' made no op of the program "
                              "being debugged (a data node, or added since the debugger "
                              "opened: debug() again)")
        pos = self.session.position
        top = pos
        while top.parent is not None:
            top = top.parent
        here = -1 if top.op_index is None else top.op_index
        block = self._block_for(ops, pos, here)
        indices = [k for b, k in ops if b == block]
        end = indices[-1]  # in a step block: the layer's end in the next frame that runs it
        if block == 0:
            later = [k for k in indices if k > here]
            if not later:
                raise FluidscopeError(f"run_to_here: the session is past layer '{node_id}' "
                                      f"(its last op is #{indices[-1]}); restart to run it again")
            end = later[0]
            while end + 1 in indices:   # the end of that contiguous run of the layer's ops
                end += 1
        if self.view is not None:
            self.view.run_to(op_index=end, block=block)
            if self.view.message:
                raise FluidscopeError(self.view.message)
        else:
            self.session.run_to(op_index=end, block=block)
        return self.session.position

    def _block_for(self, ops, pos, here):
        """The block whose ops of the layer to run to: the one the session is in, else
        the first one run by a top-level op not yet run (forward before backward)."""
        blocks = list(dict.fromkeys(b for b, _ in ops))
        if pos.block in blocks:
            return pos.block
        for block in blocks:
            top = (block, None)
            while top[0] in self.table.parent_op:
                top = self.table.parent_op[top[0]]
            if top[0] == 0 and (top[1] is None or top[1] > here) or block == 0:
                return block
        return blocks[0]

    def follows_stop(self, key):
        """Whether the debugger's graph selected ``key`` by itself: the op just run or
        one of its outputs (a DebuggerView inspects the stop's output). That is not the
        user's choice, and the canvas already lights its layer: the selection stays."""
        pos = self.session.position
        if pos.op_index is None or key.block != pos.block:
            return False
        if key.kind == "op":
            return key.name == str(pos.op_index)
        op = getattr(self.session.program, "desc", self.session.program) \
            .blocks[pos.block].ops[pos.op_index]
        return key.kind == "var" and any(key.name in v.arguments for v in op.outputs)

    def port_value(self, node_id, index):
        """Shape and min/mean/max of output ``index`` of ``node_id`` at the position."""
        build = self.canvas.build
        if build is None or node_id not in build.outputs:
            raise DesignError(f"inspect_port: node '{node_id}' has no built output")
        outputs = build.outputs[node_id]
        if not 0 <= index < len(outputs):
            raise DesignError(f"inspect_port: node '{node_id}' has no output {index}")
        name = outputs[index].name
        found = {"node": node_id, "index": index, "var": name}
        try:
            tensor = self.session.tensor(name)
        except FluidscopeError as exc:
            return {**found, "error": str(exc)}
        if tensor is None or getattr(tensor, "value", None) is None:
            return {**found, "error": "not computed yet at this position"}
        value = np.asarray(tensor.value)
        found["shape"] = [int(d) for d in value.shape]
        if value.size and np.issubdtype(value.dtype, np.number):
            found.update(min=float(value.min()), mean=float(value.mean(dtype=np.float64)),
                         max=float(value.max()))
        return found


class DebugLinkActions(traitlets.HasTraits):
    """Mixed into DesignCanvas: the ``link_state`` trait and the linked actions."""

    # {"active", "finished", "node", "phase", "op", "zone", "frame", "frames", "position",
    #  "port": the inspected output, "loss": {"node", "text"} while training}; {} unlinked
    link_state = traitlets.Dict().tag(sync=True)

    def _init_link(self):
        self.debug_link = None
        self._monitor = None
        self._loss_state = None
        self._syncing = False
        self.observe(self._selected_to_debugger, names="selected")

    def link_debugger(self, target, min_interval_s=MIN_INTERVAL_S):
        """Light the layer of each stop of ``target`` (a DebuggerView or a Session over
        a program built from this design). Returns the DebugLink."""
        view = target if hasattr(target, "session") and hasattr(target, "controls") else None
        session = view.session if view is not None else target
        if not hasattr(session, "listeners"):
            raise FluidscopeError(f"link_debugger: expected a DebuggerView or a debugger "
                                  f"Session, got {type(target).__name__}")
        self.unlink_debugger()
        self.debug_link = DebugLink(self, session, view, min_interval_s)
        if view is not None:
            view.graph.observe(self._debugger_selected, names="selected")
        return self.debug_link

    def unlink_debugger(self):
        link, self.debug_link = self.debug_link, None
        if link is None:
            return
        link.close()
        if link.view is not None:
            with contextlib.suppress(ValueError):
                link.view.graph.unobserve(self._debugger_selected, names="selected")
        self.set_link_state({"active": False})

    def link_training(self, monitor):
        """Show ``monitor``'s live loss on the loss node."""
        if self._monitor is not None:
            with contextlib.suppress(ValueError):
                self._monitor.unobserve(self._loss_changed, names="loss_text")
        self._monitor = monitor
        monitor.observe(self._loss_changed, names="loss_text")

    def set_link_state(self, state):
        """What the canvas draws of the linked session (the loss line is kept)."""
        merged = dict(state)
        if self._loss_state is not None:
            merged["loss"] = self._loss_state
        self.link_state = merged

    @action(node=str)
    def run_to_here(self, node):
        """Continue the linked session to the end of ``node``'s layer."""
        return self._linked("run_to_here").run_to_end_of(node)

    @action(node=str, index=int)
    def inspect_port(self, node, index=0):
        """Read output ``index`` of ``node`` at the position (the port's hover card)."""
        found = self._linked("inspect_port").port_value(node, index)
        self.link_state = {**self.link_state, "port": found}
        return found

    def _linked(self, what):
        if self.debug_link is None:
            raise FluidscopeError(f"{what}: no debugger is linked; open one with debug()")
        return self.debug_link

    def _loss_changed(self, change):
        loss = self._design.document.loss
        self._loss_state = {"node": loss.node if loss is not None else None,
                            "text": change["new"]}
        self.link_state = {**self.link_state, "loss": self._loss_state}

    # the debugger's graph <-> the canvas's selection
    def _debugger_selected(self, change):
        link = self.debug_link
        key = NodeKey.find(change["new"])
        if self._syncing or link is None or key is None or link.follows_stop(key):
            return
        if key.kind == "op" and key.name.isdigit():
            node = link.table.node_of(key.block, int(key.name))
        elif key.kind == "var":
            node = link.table.outputs.get(key.name)
        else:
            node = next((p for p in reversed(key.name.split("/")) if p in link.table.owner.values()),
                        None)
        if node is not None and self.selected != [node]:
            with self._guard():
                self.select([node])

    def _selected_to_debugger(self, change):
        link = self.debug_link
        if self._syncing or link is None or link.view is None or len(change["new"]) != 1:
            return
        name = link.table.output_of(change["new"][0])
        if name is not None:
            with self._guard():
                link.view.select(name)

    @contextlib.contextmanager
    def _guard(self):
        self._syncing = True
        try:
            yield
        finally:
            self._syncing = False
