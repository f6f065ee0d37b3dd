"""Files: programs (.pdmodel / .pbtxt), parameters (.pdiparams), inference export.

Everything here is plain protobuf and raw little-endian bytes: no pickle, no eval, no
subprocess. Writes are atomic (``files``), so a failed save leaves the previous file as
it was. Reads never crash: a bad file raises ``LoadError`` saying which file, what is
wrong and where (byte offset from the wire pre-scanner ``wire``, proto field path, or
line and column). Formats follow shared/paddle_compat.md, so PaddlePaddle 3.3.1 and
Netron read what we write.

* ``programs``: ProgramDesc files, binary or text;
* ``params``: the ``save_combine`` parameter stream, and scopes <-> files;
* ``inference``: pruned program + parameters, Paddle's inference model files;
* ``wire``: the protobuf wire pre-scanner; ``files``: atomic writes and reads.
"""
from ..prune import PADDLE_VERSION, prune_for_inference
from .inference import load_inference_model_files, save_inference_model_files
from .params import load_params, load_scope_params, param_specs, save_params, save_scope_params
from . import pir
from .programs import load_program, save_program

__all__ = [
    "PADDLE_VERSION", "save_program", "load_program", "save_params", "load_params",
    "param_specs", "save_scope_params", "load_scope_params", "prune_for_inference",
    "save_inference_model_files", "load_inference_model_files", "pir",
]  # PADDLE_VERSION: the version written into exported programs (3.3.1)
