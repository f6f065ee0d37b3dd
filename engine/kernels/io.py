"""``feed`` and ``fetch``: move tensors between the holder lists and the program.

The executor binds feeds and fetches directly from a plan (it reads these ops'
``col`` attributes), so these kernels run only when an op is executed on its own
(the debugger, the op tests). The holder is a Python list of LoDTensors or arrays.
"""
from ..ir.registry import Attr, AttrType, register


def _feed(xp, attrs, holder):
    item = holder[attrs["col"]]
    return xp.asarray(getattr(item, "value", item))


def _fetch(xp, attrs, x):
    return [x]


register("feed", inputs=["X"], outputs=["Out"], attrs=[Attr("col", AttrType.INT)],
         kernel=_feed, share_lod=(), doc="Out = the col-th tensor of the feed holder",
         category="io")
register("fetch", inputs=["X"], outputs=["Out"], attrs=[Attr("col", AttrType.INT)],
         kernel=_fetch, share_lod=(), doc="put X in the col-th place of the fetch holder",
         category="io")
