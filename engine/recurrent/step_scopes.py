"""``StepScopes``: the frames of one run of a recurrent op, kept for backward and for people.

Each frame holds the slot list its step block ran on (values are shared, never
copied). ``scope(t)`` shows frame ``t`` as an ordinary read-only ``Scope`` — the step
scope of Paddle's recurrent op — and ``tensor(t, name)`` reads one value.
"""
from __future__ import annotations

from ..errors import FluidscopeError
from ..runtime.frames import FrameHistory
from ..runtime.scope import Scope
from ..runtime.tensor import LoDTensor


class Frame:
    """Frame ``t``: its slot list and how many sequences are alive in it."""
    __slots__ = ("t", "vals", "batch_size")

    def __init__(self, t, vals, batch_size):
        self.t, self.vals, self.batch_size = t, vals, batch_size


class StepScopes(FrameHistory):
    """The value of a recurrent op's ``step_scopes`` output."""

    def __init__(self, plan, seq, ex_states, states):
        self.plan, self.seq = plan, seq
        self.ex_states, self.states = list(ex_states), list(states)
        self.frames: list[Frame] = []
        self._scopes = {}
        # (step slot, array of all rows in batch order) of the in-links, which each frame
        # holds a row slice of: the backward reads a frame's rows there, not in a copy
        self.inlink_rows = []

    def append(self, t, vals, batch_size=None):
        """Keep frame ``t``'s slot list (``batch_size``: its rows, when the caller knows)."""
        if batch_size is None:
            batch_size = int(self.seq.batch_sizes[t])
        self.frames.append(Frame(t, vals, batch_size))

    def pop(self, t):
        """Drop the last frame, which must be ``t`` (the debugger undoing its start)."""
        if not self.frames or self.frames[-1].t != t:
            raise FluidscopeError(f"frame {t} is not the last frame of {self!r}")
        self.frames.pop()
        self._scopes.pop(t, None)

    def __len__(self):
        return len(self.frames)

    @property
    def var_names(self):
        """Names a frame can hold (the step block's variables)."""
        return [n for n in self.plan.names[1:]]

    def sequences(self, t):
        """Indices (in LoD order) of the sequences alive at frame ``t``, in frame row order."""
        return [int(i) for i in self.seq.order[:self.seq.batch_sizes[t]]]

    # FrameHistory
    def frames_run(self):
        return [f.t for f in self.frames]

    def batch_size(self, t):
        return int(self.seq.batch_sizes[t])

    def frame_values(self, t):
        """name -> value of every step var frame ``t`` set."""
        frame = next((f for f in self.frames if f.t == t), None)
        if frame is None:
            return {}
        return {n: frame.vals[i] for i, n in enumerate(self.plan.names)
                if i and frame.vals[i] is not None}

    def tensor(self, t, name):
        """The value of step var ``name`` in frame ``t`` (None if the frame did not set it)."""
        self._check_frame(t)
        slot = self.plan.slot.get(name)
        if slot is None:
            raise FluidscopeError(f"'{name}' is not a variable of the step block; it has "
                                  f"{sorted(self.plan.slot)}")
        return self.frames[t].vals[slot]

    def scope(self, t) -> Scope:
        """Frame ``t`` as a Scope (built on first use; treat its tensors as read-only)."""
        self._check_frame(t)
        if t not in self._scopes:
            scope = Scope()
            for slot, name in enumerate(self.plan.names):
                value = self.frames[t].vals[slot] if slot else None
                if name is not None and value is not None:
                    scope.var(name).set_value(LoDTensor.wrap(value, place=self.plan.place))
            self._scopes[t] = scope
        return self._scopes[t]

    def _check_frame(self, t):
        if not 0 <= t < len(self.frames):
            raise FluidscopeError(f"frame {t} does not exist; this run has {len(self.frames)} frames")

    def __repr__(self):
        return f"StepScopes({len(self.frames)} frames, batch sizes {[int(n) for n in self.seq.batch_sizes]})"
