"""Layer functions with Paddle's static-graph names. Each lowers to registry ops."""
from .io import data
from .loss import accuracy, cross_entropy, softmax_with_cross_entropy, square_error_cost
from .math_ops import (elementwise_add, elementwise_div, elementwise_mul, elementwise_sub, exp,
                       gelu, hard_swish, leaky_relu, log, matmul, mean, reduce_mean, reduce_sum,
                       relu, relu6, scale, sigmoid, softmax, square, tanh)
from .nn import dropout, embedding, fc
from .tensor import assign, concat, fill_constant, reshape, split, transpose
from . import (attention, conv, linear_layer, mixed, norm, op_node, recurrent, rnn, rnn_group,
               rnn_layers, sequence)
from .attention import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .linear_layer import *  # noqa: F401,F403
from .mixed import *  # noqa: F401,F403
from .norm import *  # noqa: F401,F403
from .op_node import *  # noqa: F401,F403
from .recurrent import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .rnn_group import *  # noqa: F401,F403
from .rnn_layers import *  # noqa: F401,F403
from .sequence import *  # noqa: F401,F403

__all__ = [
    "data", "fc", "embedding", "dropout", "relu", "tanh", "sigmoid", "softmax", "exp", "log",
    "square", "gelu", "relu6", "leaky_relu", "hard_swish", "scale", "mean", "reduce_mean",
    "reduce_sum", "matmul", "elementwise_add", "elementwise_sub", "elementwise_mul",
    "elementwise_div", "square_error_cost", "cross_entropy", "softmax_with_cross_entropy",
    "accuracy", "concat", "split", "reshape", "transpose", "fill_constant", "assign",
] + (conv.__all__ + linear_layer.__all__ + norm.__all__ + attention.__all__ + mixed.__all__
     + recurrent.__all__ + op_node.__all__ + rnn.__all__ + rnn_layers.__all__
     + rnn_group.__all__ + sequence.__all__)
