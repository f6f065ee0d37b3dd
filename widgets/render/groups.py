"""Collapsing layers: the ops of one ``op_namescope`` drawn as one box.

Designer layers record themselves in each op's ``op_namescope`` attribute ("/fc_0/");
``name_scope("encoder")`` nests them ("/encoder/fc_0/"). A collapsed namescope is one
box per block and phase, labelled with the layer and the op types inside it:

* its forward ops (roles forward and loss) are ``group:<block>:<namescope>``;
* its grad ops (the backward copies them the forward op's namescope) are a second box,
  ``group:<block>:<namescope>@GRAD``, labelled "fc_0 grad", so the forward and the
  backward of a layer stay apart as they are when expanded;
* optimizer ops record no layer; one that does would be ``...@OPT``.

A layer of one op (``mean_0``) stays that op: its box would only hide the op's name.
An op that owns sub-blocks (a recurrent group) is a box even alone, since the box
stands for the whole step block.

Which namescopes collapse: ``collapse=True`` folds every top-level namescope;
``collapse`` as a set folds those listed (a listed scope takes its nested scopes with
it); ``expand`` opens scopes again, so ``collapse=True, expand={"encoder"}`` shows the
layers inside ``encoder`` as boxes of their own (drill-down). ``expand`` alone means
"collapse everything else". Scopes may be written "fc_0", "/fc_0/" or "encoder/fc_0".
"""
from __future__ import annotations

import difflib

from fluidscope.engine.errors import FluidscopeError

_TYPES_PER_LINE = 3
_MAX_TYPES = 9
_LAYERS_LISTED = 12  # layers named in the error for an unknown one


def normalize_namescope(scope, option="collapse") -> str:
    """``'fc_0'``, ``'/fc_0'``, ``'encoder/fc_0/'`` -> ``'/fc_0/'``, ``'/encoder/fc_0/'``."""
    if not isinstance(scope, str):
        raise FluidscopeError(
            f"program_to_dot: {option} takes namescopes as strings such as 'fc_0' or "
            f"'/encoder/fc_0/', got {scope!r}")
    parts = [p for p in scope.split("/") if p]
    if not parts:
        raise FluidscopeError(
            f"program_to_dot: {option}={scope!r}: the root namescope '/' holds the ops of no "
            "layer and cannot be collapsed or expanded; name a layer such as 'fc_0'")
    return "/" + "/".join(parts) + "/"


def _scope_set(value, option):
    if isinstance(value, str):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise FluidscopeError(
            f"program_to_dot: {option} must be a set of namescopes, got {value!r}") from None
    return {normalize_namescope(s, option) for s in items}


class Folding:
    """The collapse/expand choice: which namescope (if any) an op is folded into."""

    def __init__(self, collapse=None, expand=None):
        self.expand = _scope_set(expand, "expand") if expand is not None else set()
        if collapse is None:
            collapse = bool(self.expand)
        if isinstance(collapse, bool):
            self.everything, self.scopes = collapse, set()
        else:
            self.everything, self.scopes = False, _scope_set(collapse, "collapse")
        self.active = self.everything or bool(self.scopes)
        self._memo = {}

    def check_known(self, desc):
        """Raise FluidscopeError naming the ``collapse``/``expand`` namescopes that no op
        of ``desc`` was made in (a typo would otherwise fold or open nothing, silently)."""
        if not (self.scopes or self.expand):
            return
        known = program_namescopes(desc)
        for option, named in (("collapse", self.scopes), ("expand", self.expand)):
            unknown = sorted(named - known)
            if not unknown:
                continue
            names = sorted(layer_name(s) for s in known)
            blamed = []
            for scope in unknown:
                guess = difflib.get_close_matches(layer_name(scope), names, n=1)
                blamed.append(repr(layer_name(scope))
                              + (f" (did you mean {guess[0]!r}?)" if guess else ""))
            shown = ", ".join(names[:_LAYERS_LISTED]) or "none"
            more = f" and {len(names) - _LAYERS_LISTED} more" if len(names) > _LAYERS_LISTED else ""
            raise FluidscopeError(
                f"program_to_dot: {option} names no layer of this program: "
                f"{', '.join(blamed)}; its layers are {shown}{more}")

    def group_of(self, namescope: str):
        """The collapsed namescope an op of ``namescope`` belongs to, or None: the
        outermost collapsed prefix that ``expand`` does not open."""
        if not self.active:
            return None
        if namescope not in self._memo:
            parts = [p for p in namescope.split("/") if p]
            found = None
            for k in range(1, len(parts) + 1):
                prefix = "/" + "/".join(parts[:k]) + "/"
                if prefix not in self.expand and (self.everything or prefix in self.scopes):
                    found = prefix
                    break
            self._memo[namescope] = found
        return self._memo[namescope]


def program_namescopes(desc) -> set:
    """Every namescope an op of the ProgramDesc was made in, and the ones around those
    (``'/encoder/fc_0/'`` gives ``'/encoder/'`` too)."""
    found = set()
    for block in desc.blocks:
        for op in block.ops:
            scope = next((a.s for a in op.attrs if a.name == "op_namescope"), "")
            parts = [p for p in scope.split("/") if p]
            found.update("/" + "/".join(parts[:k]) + "/" for k in range(1, len(parts) + 1))
    return found


def layer_name(namescope: str) -> str:
    """``'/encoder/fc_0/'`` -> ``'encoder/fc_0'``."""
    return namescope.strip("/")


def group_title(namescope: str, phase: str) -> str:
    suffix = {"forward": "", "backward": " grad", "optimize": " optimizer"}[phase]
    return layer_name(namescope) + suffix


def type_lines(op_types) -> list:
    """The op types of a group in order of first use, ``mul x2`` for repeats, a few
    per line and at most ``_MAX_TYPES`` of them (then ``+ N more``)."""
    counts = {}
    for t in op_types:
        counts[t] = counts.get(t, 0) + 1
    words = [t if n == 1 else f"{t} x{n}" for t, n in counts.items()]
    extra = len(words) - _MAX_TYPES
    if extra > 0:
        words = words[:_MAX_TYPES] + [f"{extra} more"]
    lines = [" + ".join(words[i:i + _TYPES_PER_LINE])
             for i in range(0, len(words), _TYPES_PER_LINE)]
    return [line + (" +" if i < len(lines) - 1 else "") for i, line in enumerate(lines)]
