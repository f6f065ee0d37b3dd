"""Finding a variable's declaration across the blocks of a ProgramDesc.

One search, Paddle's ``BlockDesc::FindVarRecursive`` extended to grad blocks: the block
itself, then, breadth first, its forward block (a grad block reads the forward step's
vars) and its parent. The nearest declaration wins. Broken or cyclic block links end
the walk instead of failing (``validate`` reports them).
"""
from __future__ import annotations


def _search_order(program_desc, block_idx):
    """Block indices in the order a lookup from ``block_idx`` visits them."""
    frontier, seen = [block_idx], set()
    n_blocks = len(program_desc.blocks)
    while frontier:
        idx = frontier.pop(0)
        if idx in seen or not 0 <= idx < n_blocks:
            continue
        seen.add(idx)
        yield idx
        block = program_desc.blocks[idx]
        if block.forward_block_idx >= 0:
            frontier.append(block.forward_block_idx)
        if idx != 0:
            frontier.append(block.parent_idx)


def owner_block(program_desc, block_idx, name):
    """Index of the block whose declaration of ``name`` block ``block_idx`` sees (None:
    undeclared)."""
    for idx in _search_order(program_desc, block_idx):
        if any(v.name == name for v in program_desc.blocks[idx].vars):
            return idx
    return None


def find_var_recursive(program_desc, block_idx, name):
    """The VarDesc of ``name`` as block ``block_idx`` sees it, or None."""
    idx = owner_block(program_desc, block_idx, name)
    if idx is None:
        return None
    return next(v for v in program_desc.blocks[idx].vars if v.name == name)


def visible_vars(program_desc, block_idx):
    """name -> VarDesc of everything block ``block_idx`` sees (nearest declaration wins)."""
    out = {}
    for idx in _search_order(program_desc, block_idx):
        for v in program_desc.blocks[idx].vars:
            out.setdefault(v.name, v)
    return out


__all__ = ["find_var_recursive", "owner_block", "visible_vars"]
