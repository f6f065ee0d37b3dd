"""Kernel families. Importing this package registers every op with a kernel in the registry.

(The control-flow ``recurrent`` op is registered by ``engine.recurrent``, which sits
above the runtime; kernels never import the runtime.)
"""
from . import activation, elementwise, init, io, linalg, reduce, shape  # noqa: F401  (registers ops)
from . import embedding, loss, metric, optimizer, random_ops  # noqa: F401
from . import conv, rnn, sequence, sequence_conv, slicing  # noqa: F401
from . import norm  # noqa: F401
from . import interp  # noqa: F401
from . import dims, expand  # noqa: F401  (flatten/squeeze/unsqueeze/stack, expand/tile)
from . import rnn_fused  # noqa: F401  (the fused rnn op of paddle.nn.LSTM/GRU/SimpleRNN)
from . import activation_more, unary_math  # noqa: F401  (activations, unary math: issue #14)
from . import pool  # noqa: F401
from . import cast  # noqa: F401  (cast, shape, fill_any_like, range)
from . import compare  # noqa: F401  (comparisons, logical ops, isnan_v2/isinf_v2/isfinite_v2)
from . import gather  # noqa: F401  (gather, index_select, where, arg_max/min, argsort, one_hot_v2)
from . import cumulative  # noqa: F401  (cumsum)
from . import conv_transpose  # noqa: F401
from . import pad  # noqa: F401  (pad3d, pad)
from . import strided  # noqa: F401  (strided_slice)
from . import reorder  # noqa: F401  (roll, flip, unbind, meshgrid)
