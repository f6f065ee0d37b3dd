"""The declarative op test matrix.

Each family module here (``cases_<family>.py``) defines ``CASES``: a list of
``OpCase``. ``tests/test_op_matrix.py`` runs every case: the output against the numpy
reference, inferred shapes against actual shapes, and a float64 central-difference
gradient check of every differentiable input. A meta-test fails when a registered
forward op has no case, or a differentiable op no gradient-checked case; another
(test_op_coverage.py, rules in slot_coverage.py) when an input slot, output slot,
attribute or choice value of any op, forward or gradient, is exercised by none.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class OpCase:
    """One op test.

    op: op type. inputs: slot -> array (list for duplicable slots, LoDTensor for LoD).
    reference: ``f(inputs, attrs) -> {out slot: expected}`` in numpy (a bare array
    means ``{"Out": array}``); None only with ``check`` (random ops).
    check: optional ``f(outputs, inputs, attrs)`` asserting properties (random ops).
    grad: input slots to gradient-check; "auto" = every float input that takes a
    gradient; () = none (ops without gradient). grad_outputs: outputs that seed the
    gradient (default: all non-intermediate outputs). direct: call the kernel with
    ``xp=numpy`` instead of running a program (ops whose inputs are holder lists).
    """
    op: str
    inputs: dict
    reference: Callable | None = None
    attrs: dict = field(default_factory=dict)
    grad: Any = "auto"
    grad_outputs: tuple | None = None
    check: Callable | None = None
    name: str = ""
    rtol: float = 1e-6
    atol: float = 1e-7
    grad_rtol: float = 1e-5
    check_shapes: bool = True
    direct: bool = False  # call the kernel itself (ops that work on holders: feed/fetch)
    program: Callable | None = None  # control-flow ops: builds a ProgramCase

    @property
    def id(self):
        return f"{self.op}-{self.name}" if self.name else self.op


@dataclass
class ProgramCase:
    """A whole program around one control-flow op: its desc, a scalar ``loss`` var, the
    ``feed``, a ``scope`` with parameters set, ``expected`` var -> numpy reference and
    ``wrt`` (fed vars and parameters to gradient-check, float64)."""
    desc: Any
    loss: str
    feed: dict
    scope: Any
    expected: dict
    wrt: list


# Modules whose cases are variants of other modules' cases (they import those): kept out
# of ``source_cases`` so that none imports another half-initialised.
DERIVED_MODULES = ("cases_layouts", "cases_variants")


def source_cases():
    """The OpCases of every ``cases_*`` module except the derived ones."""
    cases = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("cases_") and info.name not in DERIVED_MODULES:
            cases.extend(importlib.import_module(f"{__name__}.{info.name}").CASES)
    return cases


def find_case(case_id):
    """The source case named ``case_id`` (``op-name``)."""
    found = [c for c in source_cases() if c.id == case_id]
    assert len(found) == 1, f"{len(found)} op-matrix cases named {case_id}"
    return found[0]


def all_cases():
    """Every OpCase of every ``cases_*`` module in this package."""
    cases = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("cases_"):
            cases.extend(importlib.import_module(f"{__name__}.{info.name}").CASES)
    return cases
