"""Kernel families. Importing this package registers every op with a kernel in the registry.

(The control-flow ``recurrent`` op is registered by ``engine.recurrent``, which sits
above the runtime; kernels never import the runtime.)
"""
from . import activation, elementwise, init, io, linalg, reduce, shape  # noqa: F401  (registers ops)
from . import embedding, loss, metric, optimizer, random_ops  # noqa: F401
from . import conv, rnn, sequence, sequence_conv, slicing  # noqa: F401
