"""Kernel families. Importing this package registers every op in the registry."""
from . import activation, elementwise, init, io, linalg, reduce, shape  # noqa: F401  (registers ops)
from . import embedding, loss, metric, optimizer, random_ops  # noqa: F401
from . import conv, rnn, sequence, slicing  # noqa: F401
from .. import recurrent  # noqa: F401,E402  (the recurrent op lives beside the executor)
