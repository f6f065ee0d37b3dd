"""Parameter files: Paddle's combined ``save_combine`` stream (``.pdiparams``), and scopes.

Per tensor, in ``sorted(name)`` order::

    u32 version=0 | u64 lod_levels (+ per level u64 nbytes, u64 offsets) |
    u32 tensor_version=0 | i32 len | TensorDesc | raw little-endian data

Plain bytes, no pickle. Reads check every header against the program's declaration and
raise ``LoadError`` naming the var and the byte offset.
"""
from __future__ import annotations

import os
import struct

import numpy as np

from ..errors import FluidscopeError, LoadError
from ..ir.dtypes import dtype_name, to_numpy_dtype, to_var_type
from ..ir.proto import framework_pb2 as pb
from ..runtime.place import to_host
from ..runtime.scope import global_scope, name_in_main, scopes_holding
from ..runtime.tensor import LoDTensor
from .files import atomic_write, read_file

_VT = pb.VarType
_HOLDERS = (_VT.FEED_MINIBATCH, _VT.FETCH_LIST, _VT.RAW)
_U32, _I32, _U64 = struct.Struct("<I"), struct.Struct("<i"), struct.Struct("<Q")


def tensor_record(name, value):
    """(VarType, little-endian C-ordered array, LoD) of one tensor to store."""
    lod = []
    if isinstance(value, LoDTensor):
        lod, value = value.lod(), value.value
    if value is None:
        raise FluidscopeError(f"parameter '{name}' holds no value")
    array = np.asarray(to_host(value))
    try:
        var_type = to_var_type(array.dtype.newbyteorder("="))
    except FluidscopeError as exc:
        raise FluidscopeError(f"parameter '{name}': {exc}") from None
    # asarray, not ascontiguousarray: the latter turns a 0-d tensor into shape [1]
    return var_type, np.asarray(array, dtype=array.dtype.newbyteorder("<"), order="C"), lod


def params_chunks(records):
    """The bytes of a ``.pdiparams`` stream of ``tensor_record``s, chunk by chunk."""
    for var_type, array, lod in records:
        head = [_U32.pack(0), _U64.pack(len(lod))]
        for level in lod:
            head += [_U64.pack(8 * len(level)), np.asarray(level, "<u8").tobytes()]
        tensor_desc = _VT.TensorDesc(data_type=var_type, dims=array.shape).SerializeToString()
        head += [_U32.pack(0), _I32.pack(len(tensor_desc)), tensor_desc]
        yield b"".join(head)
        yield memoryview(array.reshape(-1).view(np.uint8))


def save_params(path, tensors):
    """Write ``tensors`` (name -> ndarray or LoDTensor) to ``path`` in Paddle's combined
    ``.pdiparams`` format, in ``sorted(name)`` order; atomic."""
    records = [tensor_record(name, tensors[name]) for name in sorted(tensors)]
    atomic_write(path, params_chunks(records))


class ParamsReader:
    """Cursor over a parameters file that raises LoadError naming var and offset."""

    def __init__(self, path, data):
        self.path, self.data, self.pos = path, data, 0

    def fail(self, name, what, pos=None):
        raise LoadError(f"{self.path}: var '{name}' at byte "
                        f"{self.pos if pos is None else pos}: {what}")

    def take(self, name, n, what):
        if self.pos + n > len(self.data):
            self.fail(name, f"{what} needs {n} bytes but only {len(self.data) - self.pos} "
                            f"remain (truncated file?)")
        start, self.pos = self.pos, self.pos + n
        return start

    def unpack(self, name, st, what):
        return st.unpack_from(self.data, self.take(name, st.size, what))[0]


def read_tensor(r, name, var_type, dims):
    """Read one tensor at ``r``'s cursor, checked against its declared dtype and dims."""
    start = r.pos
    if r.unpack(name, _U32, "the version") != 0:
        r.fail(name, "tensor version is not 0 (not a .pdiparams stream here?)", start)
    lod = []
    for level in range(r.unpack(name, _U64, "the LoD level count")):
        nbytes = r.unpack(name, _U64, f"LoD level {level} size")
        if nbytes % 8 or nbytes > len(r.data):
            r.fail(name, f"LoD level {level} claims {nbytes} bytes")
        lod.append([int(v) for v in np.frombuffer(r.data, "<u8", nbytes // 8,
                                                  r.take(name, nbytes, f"LoD level {level}"))])
    if r.unpack(name, _U32, "the tensor version") != 0:
        r.fail(name, "tensor desc version is not 0", r.pos - 4)
    length = r.unpack(name, _I32, "the TensorDesc size")
    if length <= 0:
        r.fail(name, f"TensorDesc size {length} is invalid", r.pos - 4)
    at = r.take(name, length, "the TensorDesc")
    try:
        tensor_desc = _VT.TensorDesc.FromString(bytes(r.data[at:at + length]))
        ok = tensor_desc.IsInitialized()
    except Exception:  # the C parser's DecodeError
        ok = False
    if not ok:
        r.fail(name, "unreadable TensorDesc (data_type, dims)", at)
    got_dims = list(tensor_desc.dims)
    try:
        got_dtype = to_numpy_dtype(tensor_desc.data_type)
    except FluidscopeError as exc:
        r.fail(name, str(exc), at)
    want = f"the program declares {dtype_name(var_type)} {list(dims)}"
    if tensor_desc.data_type != var_type:
        r.fail(name, f"the file holds {got_dtype.name} {got_dims}, {want}", at)
    if any(d < 0 for d in got_dims) or len(got_dims) != len(dims) or any(
            w >= 0 and w != g for w, g in zip(dims, got_dims)):
        r.fail(name, f"the file holds {got_dtype.name} {got_dims}, {want}", at)
    count = int(np.prod(got_dims, dtype=np.int64))
    at = r.take(name, count * got_dtype.itemsize, f"the data ({count} x {got_dtype.name})")
    array = np.frombuffer(r.data, got_dtype.newbyteorder("<"), count, at)
    array = array.astype(got_dtype).reshape(got_dims)  # a native-order copy we own
    return LoDTensor(array, lod) if lod else array


def load_params(path, specs):
    """Read a ``.pdiparams`` file holding the vars ``specs`` (list of (name, dtype, dims)).

    Tensors are read in ``sorted(name)`` order and each header is checked against its
    spec (a -1 in ``dims`` matches any size). Returns name -> ndarray (a LoDTensor for a
    tensor stored with LoD). Truncation, extra bytes and mismatches raise LoadError."""
    path = os.fspath(path)
    norm = []
    for name, dtype, dims in specs:
        try:
            norm.append((name, to_var_type(dtype), [int(d) for d in dims]))
        except FluidscopeError as exc:
            raise LoadError(f"{path}: var '{name}': {exc}") from None
    norm.sort(key=lambda s: s[0])
    names = [s[0] for s in norm]
    if len(set(names)) != len(names):
        raise LoadError(f"{path}: the var list names a var twice: {names}")
    r = ParamsReader(path, memoryview(read_file(path)))
    out = {}
    for k, (name, var_type, dims) in enumerate(norm):
        if r.pos == len(r.data):
            raise LoadError(f"{path}: the file ends at byte {r.pos} after {k} tensors; var "
                            f"'{name}' and {len(norm) - k - 1} more are missing (the program "
                            f"has {len(norm)} persistable vars)")
        out[name] = read_tensor(r, name, var_type, dims)
    if r.pos != len(r.data):
        last = f"after the last var '{names[-1]}'" if names else "but the program has no parameters"
        raise LoadError(f"{path}: {len(r.data) - r.pos} trailing bytes at byte {r.pos} {last}; "
                        f"the file holds more than the program's {len(norm)} persistable vars")
    return out


def param_specs(desc):
    """(name, dtype, dims) of every persistable var a ``.pdiparams`` file holds for
    ``desc``: all blocks, holder vars excluded, sorted by name (Paddle's rule)."""
    specs = {}
    for block in desc.blocks:
        for v in block.vars:
            if not v.persistable or v.type.type in _HOLDERS or v.name in specs:
                continue
            if v.type.type != _VT.DENSE_TENSOR:
                raise LoadError(f"persistable var '{v.name}' has type "
                                f"{_VT.Type.Name(v.type.type)}; only DENSE_TENSOR can be stored")
            tensor = v.type.dense_tensor.tensor
            if v.is_parameter and any(d < 0 for d in tensor.dims):
                raise LoadError(f"parameter '{v.name}' is declared with an unknown dim "
                                f"{list(tensor.dims)}; parameters need fixed dims")
            specs[v.name] = (v.name, tensor.data_type, list(tensor.dims))
    return [specs[n] for n in sorted(specs)]


def save_scope_params(path, desc, scope):
    """Write the values in ``scope`` of ``desc``'s persistable vars to ``path``
    (``.pdiparams`` format); each value must match its declared dtype and dims."""
    try:
        specs = param_specs(desc)
    except LoadError as exc:
        raise FluidscopeError(str(exc)) from None
    tensors = {}
    for name, var_type, dims in specs:
        var = scope.find_var(name)
        if var is None or not var.is_initialized():
            raise FluidscopeError(missing_param_message(name, [n for n, _, _ in specs], scope))
        tensor = var.get_tensor()
        array = np.asarray(to_host(tensor.value))
        want = to_numpy_dtype(var_type)
        if array.dtype != want or len(dims) != array.ndim or any(
                d >= 0 and d != s for d, s in zip(dims, array.shape)):
            raise FluidscopeError(f"parameter '{name}': the scope holds {array.dtype} "
                                  f"{list(array.shape)}, the program declares {want} {dims}")
        tensors[name] = LoDTensor(array, tensor.lod()) if tensor.lod() else array
    save_params(path, tensors)


def missing_param_message(name, names, scope):
    """What to tell a person whose ``scope`` lacks parameter ``name`` of a program whose
    persistable vars are ``names``: when another live Scope holds them all, that the
    values are there (trained in a custom Scope, exported from the global one) and how
    to pass it; else to run the startup program or load the parameters."""
    where = "the global scope" if scope is global_scope() else "the scope given"
    holders = scopes_holding(names, scope)
    if not holders:
        return (f"parameter '{name}' has no value in {where}; run the startup program (or "
                f"load the parameters) first")
    named = [n for n in map(name_in_main, holders) if n]  # a stale scope has no name left
    shown = named[0] if named else "<that Scope>"
    return (f"parameter '{name}' has no value in {where}, but another Scope holds all "
            f"{len(names)} persistable vars of this program (the one your startup program "
            f"and training ran in): pass it with scope={shown}, or export inside "
            f"'with scope_guard({shown}):'")


def load_scope_params(path, desc, scope, place=None):
    """Read ``path`` (``.pdiparams``) holding ``desc``'s persistable vars into ``scope``
    (on ``place``, CPU by default). Returns the names loaded, sorted."""
    try:
        specs = param_specs(desc)
    except LoadError as exc:
        raise LoadError(f"{os.fspath(path)}: {exc}") from None
    values = load_params(path, specs)
    for name, value in values.items():
        tensor = scope.var(name).get_tensor()
        if isinstance(value, LoDTensor):
            tensor.set(value.value, place)
            tensor.set_lod(value.lod())
        else:
            tensor.set(value, place)
            tensor.set_lod([])
    return sorted(values)


__all__ = ["tensor_record", "params_chunks", "save_params", "ParamsReader", "read_tensor",
           "load_params", "param_specs", "save_scope_params", "missing_param_message",
           "load_scope_params"]
