"""Op roles: what part of a training program an op belongs to (Paddle's ``op_role`` attribute).

``op_role`` is a bit set (Paddle's ``OpRole``): Forward 0, Backward 1, Optimize 2, RPC 4,
Dist 8, LRSched 16, Loss 256, NotSpecified 4096. The loss seed of backward is
Backward|Loss (257). Every reader of the attribute decodes it here, so one rule holds
everywhere: a learning-rate-schedule op (LRSched) belongs to the **optimize** phase —
it runs with the optimizer, and pruning for inference and ``clone(for_test)`` drop it
with the optimizer ops, as Paddle's ``PruneBackward`` does.
"""
from __future__ import annotations

import enum

ROLE_ATTR = "op_role"
ROLE_VAR_ATTR = "op_role_var"


class OpRole(enum.IntFlag):
    """Paddle's ``OpRole`` bits (framework/op_proto_maker.h)."""
    FORWARD = 0
    BACKWARD = 1
    OPTIMIZE = 2
    RPC = 4
    DIST = 8
    LR_SCHED = 16
    LOSS = 256
    NOT_SPECIFIED = 4096


FORWARD, BACKWARD, OPTIMIZE = "forward", "backward", "optimize"
PHASES = (FORWARD, BACKWARD, OPTIMIZE)


def role_of(op_desc) -> int:
    """The ``op_role`` bits of an OpDesc (0, forward, when it has none)."""
    for attr in op_desc.attrs:
        if attr.name == ROLE_ATTR:
            return attr.i
    return 0


def phase_of_role(role: int) -> str:
    """'forward', 'backward' or 'optimize' for ``op_role`` bits (LRSched is optimize)."""
    if role & (OpRole.OPTIMIZE | OpRole.LR_SCHED):
        return OPTIMIZE
    return BACKWARD if role & OpRole.BACKWARD else FORWARD


def phase_of(op_desc) -> str:
    """The phase of an OpDesc (see ``phase_of_role``)."""
    return phase_of_role(role_of(op_desc))


def is_training_role(role: int) -> bool:
    """True for ops a trained model does not need at inference: backward, optimize and
    learning-rate schedule ops."""
    return phase_of_role(role) != FORWARD


def role_kind(role: int) -> str:
    """The finer kind views draw: 'forward', 'loss' (Loss alone), 'backward',
    'loss_grad' (Backward|Loss, the seed) or 'optimize' (Optimize or LRSched).
    Anything else, NotSpecified (4096) included, is 'forward'."""
    phase = phase_of_role(role)
    if phase == BACKWARD:
        return "loss_grad" if role & OpRole.LOSS else "backward"
    if phase == FORWARD and role & OpRole.LOSS:
        return "loss"
    return phase


__all__ = ["OpRole", "ROLE_ATTR", "ROLE_VAR_ATTR", "FORWARD", "BACKWARD", "OPTIMIZE", "PHASES",
           "role_of", "phase_of_role", "phase_of", "is_training_role", "role_kind"]
