"""Hierarchical scopes: name -> Variable, looked up through parents (reference/001).

Persistable variables (parameters, optimizer state) live in the root scope the user
passes to the executor; a run's temporaries live in a kid scope of it.
"""
import contextlib
import itertools
import sys
import weakref

from .tensor import LoDTensor

# Every live root scope, so an error about a value missing from one scope can say that
# another holds it (a person trained in Scope() and exported from the global scope).
_ROOTS = weakref.WeakSet()

# Scope.generation values: one counter for all scopes, so that no two states of any two
# scopes share a number (a cache keyed by (id(scope), generation) never mistakes a new
# scope at a dead one's address for it).
_GENERATIONS = itertools.count(1)


class Variable:
    """A named slot in a scope holding a LoDTensor or another runtime value."""
    __slots__ = ("name", "_value")

    def __init__(self, name):
        self.name, self._value = name, None

    def get_tensor(self) -> LoDTensor:
        if self._value is None:
            self._value = LoDTensor()
        return self._value

    def get_value(self):
        return self._value

    def set_value(self, value):
        self._value = value

    def is_initialized(self):
        if isinstance(self._value, LoDTensor):
            return self._value.value is not None
        return self._value is not None

    def __repr__(self):
        return f"Variable({self.name!r}, {self._value!r})"


class Scope:
    """Name -> Variable, with a parent. ``find_var`` walks up; ``var`` creates here.

    ``generation`` changes whenever a name is added here or erased: the Variable a name
    finds here stays the same while it does not (``runtime.feed`` keeps the variables a
    plan reads and writes per root scope and generation, instead of looking each up on
    every run)."""

    def __init__(self, parent=None):
        self.parent, self._vars, self._kids = parent, {}, []
        self.generation = next(_GENERATIONS)
        if parent is None:
            _ROOTS.add(self)

    def var(self, name) -> Variable:
        """The variable ``name`` of this scope, created here if it is not."""
        v = self._vars.get(name)
        if v is None:
            v = self._vars[name] = Variable(name)
            self.generation = next(_GENERATIONS)
        return v

    def find_var(self, name):
        """The variable ``name`` here or in the nearest ancestor that has it, else None."""
        scope = self
        while scope is not None:
            v = scope._vars.get(name)
            if v is not None:
                return v
            scope = scope.parent
        return None

    def find_local_var(self, name):
        return self._vars.get(name)

    def erase(self, names):
        for n in names:
            self._vars.pop(n, None)
        self.generation = next(_GENERATIONS)

    def local_var_names(self):
        return list(self._vars)

    def new_scope(self):
        kid = Scope(self)
        self._kids.append(kid)
        return kid

    def kids(self):
        return list(self._kids)

    def drop_kids(self):
        self._kids.clear()

    def delete_scope(self, kid):
        if kid in self._kids:
            self._kids.remove(kid)

    def __contains__(self, name):
        return self.find_var(name) is not None

    def __repr__(self):
        return f"Scope({len(self._vars)} vars, {len(self._kids)} kids)"


_global_scope = Scope()


def scopes_holding(names, besides):
    """Live root scopes other than ``besides`` (and its ancestors) that hold a value for
    every one of ``names``; for errors that point a person at the scope they meant."""
    skip = set()
    scope = besides
    while scope is not None:
        skip.add(id(scope))
        scope = scope.parent
    found = []
    for root in list(_ROOTS):
        if id(root) in skip:
            continue
        vars_ = [root.find_var(n) for n in names]
        if all(v is not None and v.is_initialized() for v in vars_):
            found.append(root)
    return found


def name_in_main(obj):
    """A name the user's ``__main__`` (a script, a notebook's namespace) binds to ``obj``,
    or None: lets an error say ``scope=train_scope`` rather than "that scope"."""
    namespace = getattr(sys.modules.get("__main__"), "__dict__", {})
    return next((k for k, v in list(namespace.items())
                 if v is obj and not k.startswith("_")), None)


def global_scope() -> Scope:
    """The scope ``Executor.run`` uses when none is given."""
    return _global_scope


@contextlib.contextmanager
def scope_guard(scope):
    """Make ``scope`` the global scope inside the ``with`` block."""
    global _global_scope
    saved, _global_scope = _global_scope, scope
    try:
        yield scope
    finally:
        _global_scope = saved
