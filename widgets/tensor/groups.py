"""The inspector's variable list, grouped the way a user looks for a tensor.

A training program of a few layers reads ~90 names, most of them optimizer state (Adam's
two moments and two beta powers per parameter, the learning rate). The list is split
into what the program computes (activations, the feeds among them), its parameters,
their gradients, and the optimizer's own persistable state, which the front end folds
away. The kind comes from the VarDesc (``is_parameter``, ``persistable``) and the
gradient suffix, never from name patterns such as "moment".
"""
from __future__ import annotations

from fluidscope.engine.ir.names import GRAD_SUFFIX

ACTIVATIONS, PARAMETERS, GRADIENTS, OPTIMIZER = ("activations", "parameters", "gradients",
                                                 "optimizer state")
GROUPS = (ACTIVATIONS, PARAMETERS, GRADIENTS, OPTIMIZER)


def kind_of(name, var_desc) -> str:
    """The group of variable ``name`` (its VarDesc, or None for a name only a recurrent
    frame knows): a gradient by its suffix, a parameter or optimizer state (any other
    persistable variable: moments, beta powers, the learning rate) by its VarDesc, else an
    activation."""
    if GRAD_SUFFIX in name:
        return GRADIENTS
    if var_desc is not None and var_desc.is_parameter:
        return PARAMETERS
    if var_desc is not None and var_desc.persistable:
        return OPTIMIZER
    return ACTIVATIONS


def group_variables(names, var_descs) -> dict:
    """``names`` split into ``GROUPS`` (each list in the order given; every group present).

    var_descs : name -> VarDesc (a session's ``plan.var_descs``)."""
    groups = {group: [] for group in GROUPS}
    for name in names:
        groups[kind_of(name, var_descs.get(name))].append(name)
    return groups


__all__ = ["group_variables", "kind_of", "GROUPS", "ACTIVATIONS", "PARAMETERS", "GRADIENTS",
           "OPTIMIZER"]
