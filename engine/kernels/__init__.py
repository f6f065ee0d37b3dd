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
from . import set_value  # noqa: F401  (set_value: x[i:j] = v in static programs)
from . import rearrange  # noqa: F401  (pixel/channel shuffle, temporal_shift, unfold/fold)
from . import creation, creation_random  # noqa: F401  (creation ops: issue #14)
from . import unary_more  # noqa: F401  (trig/hyperbolic, trunc, logit, brelu, stanh, rrelu, maxout: issue #14)
from . import loss_more, loss_nll, loss_ctc  # noqa: F401  (BCE, huber, kldiv, log/hinge, nll_loss, label_smooth, cross_entropy, warpctc)
from . import scatter, along_axis  # noqa: F401  (scatter, scatter_nd_add, index_sample, index_add, take/put_along_axis)
from . import conv3d  # noqa: F401  (conv3d, conv3d_transpose)
from . import binary_more  # noqa: F401  (atan2, elementwise_fmax/fmin/heaviside, lerp: issue #14)
from . import legacy_ops, legacy_lookup, legacy_interp, legacy_crop  # noqa: F401  (Paddle 1.x/2.x ops: #14)
from . import lrn  # noqa: F401  (lrn)
from . import norms  # noqa: F401  (p_norm, norm, frobenius_norm, squared_l2_norm, logsumexp: issue #14)
from . import sampling  # noqa: F401  (affine_grid, grid_sampler, unpool, unpool3d)
from . import cumulative_more  # noqa: F401  (cumprod, logcumsumexp, cummax, cummin: issue #14)
from . import lp_pool  # noqa: F401  (lp_pool2d)
from . import linalg_more  # noqa: F401  (matmul v1, dot, bmm, mv, kron, trace, tril_triu, addmm, diag_v2, eye: issue #14)
from . import roi  # noqa: F401  (roi_align, roi_pool)
from . import deform_conv  # noqa: F401  (deformable_conv, deformable_conv_v1)
from . import select, select_order  # noqa: F401  (masked_select, where_index, unique, repeat_interleave, kthvalue, mode, median, nanmedian, searchsorted, bincount)
