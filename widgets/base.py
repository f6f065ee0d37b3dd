"""One widget base and one message convention for every fluidscope widget.

A front end asks Python for something with one message, ``{"action": name, **args}``
(``js/src/shared/protocol.js`` sends it). Python answers by changing synced traits; a
message never gets a reply of its own. The handler of an action is a public method of
the widget (or of the view that owns the widget) marked with ``@action``, which
declares the arguments the front end may send and their types::

    class GraphView(FluidscopeWidget):
        @action(key=str)
        def toggle_group(self, key): ...

Notebook users and tests call the same method; ``receive(message)`` delivers a message
exactly as the browser would (tests use it instead of ipywidgets' private handler).

Whatever a message cannot do is reported, never dropped and never raised (a comm
handler has no caller to raise to): an unknown action, an argument that is missing,
unexpected or of the wrong type, and an exception the handler raised all end up as one
line in the widget's synced ``message`` trait, which every front end shows. The next
message clears such a report; what else a widget writes into ``message`` (the training
monitor's status line, say) is left to that widget.
"""
from __future__ import annotations

import inspect
import pathlib
from dataclasses import dataclass

import anywidget
import traitlets

from fluidscope.engine.errors import FluidscopeError

# The built front ends (js/build.mjs writes them; every widget's _esm/_css points here).
STATIC = pathlib.Path(__file__).resolve().parent / "static"
# argument type -> what a report calls it
_TYPE_NAMES = {str: "a string", int: "a whole number", float: "a number", bool: "true or false",
               list: "a list", dict: "an object", type(None): "null"}


class ActionError(FluidscopeError):
    """A front-end message that names no action of the widget or has bad arguments."""


@dataclass(frozen=True)
class Action:
    """One front-end action: the method it calls and the arguments it accepts.

    params : argument name -> a type or a tuple of types (``None`` allows null); the
        front end may leave out an argument whose parameter has a default.
    """

    name: str
    params: dict
    required: frozenset

    def bind(self, content: dict) -> dict:
        """The keyword arguments of ``content`` (the message less ``action``), checked;
        ActionError naming what is wrong."""
        unexpected = sorted(set(content) - set(self.params))
        if unexpected:
            raise ActionError(f"{self.name}: unexpected argument(s) {unexpected}; it takes "
                              f"{sorted(self.params) or 'none'}")
        missing = sorted(self.required - set(content))
        if missing:
            raise ActionError(f"{self.name}: missing argument(s) {missing}")
        for key, value in content.items():
            allowed = self.params[key]
            if not _is_instance(value, allowed):
                names = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in allowed)
                raise ActionError(f"{self.name}: argument {key!r} must be {names}, got "
                                  f"{value!r}")
        return dict(content)


def _is_instance(value, types) -> bool:
    if isinstance(value, bool):  # JSON true is no number here
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)


def action(**params):
    """Mark a public method as a front-end action taking ``params`` (name -> type, or a
    tuple of types; ``None`` in it allows null)."""
    normalized = {name: tuple(type(None) if t is None else t
                              for t in (kind if isinstance(kind, tuple) else (kind,)))
                  for name, kind in params.items()}

    def mark(method):
        signature = inspect.signature(method)
        names = list(signature.parameters)[1:]  # after self
        stray = sorted(set(normalized) - set(names))
        if stray:
            raise TypeError(f"@action on {method.__qualname__}: no parameter(s) {stray}")
        required = frozenset(n for n in normalized
                             if signature.parameters[n].default is inspect.Parameter.empty)
        method.front_end_action = Action(method.__name__, normalized, required)
        return method

    return mark


def actions_of(cls) -> dict:
    """Every ``@action`` of ``cls`` and its bases: name -> Action."""
    found = {}
    for klass in reversed(cls.__mro__):
        for name, member in vars(klass).items():
            spec = getattr(member, "front_end_action", None)
            if isinstance(spec, Action):
                found[name] = spec
    return found


class FluidscopeWidget(anywidget.AnyWidget):
    """The base of every fluidscope anywidget: one ``message`` trait and one dispatcher.

    handler : the object whose ``@action`` methods answer this widget's front end
        (default: the widget itself; a composite view such as DebuggerView passes
        itself for its control bar).
    """

    message = traitlets.Unicode("").tag(sync=True)

    def __init__(self, *, handler=None, **kwargs):
        super().__init__(**kwargs)
        self._handler = self if handler is None else handler
        self._actions = actions_of(type(self._handler))
        self._last_report = ""
        self.on_msg(self._on_comm_message)

    @property
    def actions(self) -> dict:
        """The actions this widget's front end may send: name -> Action."""
        return dict(self._actions)

    def receive(self, content) -> bool:
        """Handle one front-end message as the browser sends it (``{"action": ...}``).

        Returns True when the action ran; False when it could not, with the reason in
        ``message``. Never raises a FluidscopeError or another Exception."""
        name = content.get("action") if isinstance(content, dict) else None
        try:
            spec = self._lookup(name, content)
            kwargs = spec.bind({k: v for k, v in content.items() if k != "action"})
        except ActionError as exc:
            self.report(f"{type(self).__name__}: {exc}")
            return False
        if self._last_report and self.message == self._last_report:
            self.message = ""  # the last message's failure is old news
        self._last_report = ""
        try:
            getattr(self._handler, spec.name)(**kwargs)
        except FluidscopeError as exc:
            self.report(self._named(spec.name, str(exc)))
            return False
        except Exception as exc:  # noqa: BLE001 - reported in the page, kernel stays up
            self.report(f"{spec.name}: {type(exc).__name__}: {exc}")
            return False
        return True

    def report(self, text: str) -> None:
        """Show ``text`` in the widget's message line (cleared by the next message)."""
        self._last_report = text
        self.message = text

    def _lookup(self, name, content) -> Action:
        if not isinstance(content, dict) or not isinstance(name, str):
            raise ActionError(f"a front-end message must be an object with an 'action' "
                              f"string, got {content!r}")
        spec = self._actions.get(name)
        if spec is None:
            raise ActionError(f"unknown action {name!r}; known: {sorted(self._actions)}")
        return spec

    def _named(self, action_name, text):
        """``text`` led by the action's name, unless the error already names it
        ("GraphView.toggle_group: ...")."""
        owner = type(self._handler).__name__
        if text.startswith((f"{action_name}:", f"{owner}.{action_name}:")):
            return text
        return f"{action_name}: {text}"

    def _on_comm_message(self, _widget, content, _buffers):
        self.receive(content)  # no action takes binary buffers


__all__ = ["FluidscopeWidget", "STATIC", "Action", "ActionError", "action", "actions_of"]
