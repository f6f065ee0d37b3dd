"""Starting values of required attributes for a layer dropped from the palette.

``Design.add`` refuses a layer without its required attributes (an fc needs a
``size``), but a drop from the palette carries none. The canvas fills them with
ordinary values the user then edits in the property panel; the node builds at once, so
its shapes show while the user is still arranging.
"""
from __future__ import annotations

from fluidscope.designer.design.validate import spec_for
from fluidscope.engine import DesignError

# by attribute name and type: sizes that read as "a layer", shapes as "one feature"
_BY_NAME = {
    ("size", "int"): 64,
    ("size", "ints"): [1000, 64],
    ("shape", "shape"): [None, 1],
    ("shape", "ints"): [-1, 1],
    ("perm", "ints"): [1, 0],
    ("dropout_prob", "float"): 0.5,
    ("num_or_sections", "int_or_ints"): 2,
    ("value", "number"): 0.0,
    ("context_len", "int"): 3,
    ("filter_size", "int"): 3,           # sequence_conv
    ("filter_size", "int_or_ints"): 3,   # conv2d / conv2d_transpose: a 3x3 kernel
    ("num_filters", "int"): 16,
}
_BY_TYPE = {"int": 1, "float": 0.0, "number": 0.0, "bool": False, "ints": [1],
            "floats": [0.0], "int_or_ints": 1, "shape": [None, 1]}


def starting_attrs(layer, given=None) -> dict:
    """``given`` plus a value for every required attribute of ``layer`` it lacks.
    DesignError naming the attribute when no ordinary value exists (an op's type,
    a variable's desc): the caller must give it."""
    attrs = dict(given or {})
    _, specs = spec_for(layer)
    for name, spec in specs.items():
        if not spec.required or name in attrs:
            continue
        if spec.choices:
            attrs[name] = next(c for c in spec.choices if c is not None)
        elif (name, spec.type) in _BY_NAME:
            attrs[name] = _BY_NAME[(name, spec.type)]
        elif spec.type in _BY_TYPE:
            attrs[name] = _BY_TYPE[spec.type]
        else:
            raise DesignError(f"add_node: layer {layer} needs attribute '{name}' "
                              f"({spec.type}); pass it in attrs")
    return attrs
