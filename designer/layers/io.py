"""``data``: declare a program input."""
from fluidscope.engine.errors import DesignError

from .. import framework
from ..layer_specs import layer_spec


@layer_spec("io", inputs={}, types={"shape": "shape"})
def data(name, shape, dtype="float32", lod_level=0):
    """A feed variable. ``shape`` includes the batch dim; None or -1 means any size.

    With ``lod_level=1`` it takes variable-length sequences (a LoDTensor feed)."""
    if not isinstance(name, str) or not name:
        raise DesignError(f"data: name must be a non-empty string, got {name!r}")
    try:
        if isinstance(shape, (str, bytes)):
            raise TypeError
        dims = [-1 if d is None else int(d) for d in shape]
    except (TypeError, ValueError):
        raise DesignError(f"data '{name}': shape must be a list of ints or None, got {shape!r}") from None
    if any(d < -1 or d == 0 for d in dims):
        raise DesignError(f"data '{name}': shape {list(shape)} has a dim that is 0 or below -1")
    block = framework.default_main_program().global_block()
    if block.has_var(name):
        raise DesignError(f"data '{name}': a variable of that name already exists")
    return block.create_var(name=name, shape=dims, dtype=dtype, lod_level=lod_level,
                            stop_gradient=True, need_check_feed=True)
