"""The IR and what it means, in one place (imports nothing of the engine but ``errors``).

* ``proto``: ``framework_pb2``, Paddle-compatible ProgramDesc messages (and ``regen``);
* ``registry``: one record per op type (slots, attributes, shape inference, kernels,
  grad maker);
* ``roles``: ``OpRole`` and the phase (forward / backward / optimize) of an op;
* ``names``: gradient and placeholder naming (``x@GRAD``, ``@RENAME@``, ``@EMPTY@``);
* ``lookup``: finding a variable across blocks (Paddle's FindVarRecursive);
* ``descs``: the only builders of OpDescs and VarDescs;
* ``dtypes``: VarType <-> numpy dtypes;
* ``validate``: structural validation of a ProgramDesc.
"""
