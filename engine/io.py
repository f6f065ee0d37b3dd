"""Files: programs (.pdmodel / .pbtxt), parameters (.pdiparams), inference export.

Everything here is plain protobuf and raw little-endian bytes: no pickle, no eval, no
subprocess. Writes are atomic (a temp file in the target's folder, fsync, then
``os.replace``), so a failed save leaves the previous file as it was. Reads never
crash: a bad file raises ``LoadError`` saying which file, what is wrong and where
(byte offset, proto field path, or line and column). Formats follow
shared/paddle_compat.md, so PaddlePaddle 3.3.1 and Netron read what we write.

* program, binary: a ProgramDesc, deterministic serialisation; names ``*.pdmodel``,
  ``*.paddle``, ``__model__`` (the names Netron recognises);
* program, text: protobuf text format, ``*.pbtxt`` or ``*.txt`` (Paddle 2.x names
  ``lod_tensor``/``lod_level``/``LOD_TENSOR`` are accepted on reading);
* parameters: ``save_combine`` stream, per tensor in ``sorted(name)`` order:
  ``u32 version=0 | u64 lod_levels (+ per level u64 nbytes, u64 offsets) |
  u32 tensor_version=0 | i32 len | TensorDesc | raw data``.
"""
from __future__ import annotations

import contextlib
import os
import re
import struct
import tempfile

import numpy as np
from google.protobuf import descriptor as _descriptor
from google.protobuf import text_format

from .dtypes import dtype_name, to_numpy_dtype, to_var_type
from .errors import FluidscopeError, LoadError
from .place import to_host
from .proto import framework_pb2 as pb
from .tensor import LoDTensor
from .prune import PADDLE_VERSION, prune_for_inference
from .validate import find_problems, validate_program

_VT = pb.VarType
_HOLDERS = (_VT.FEED_MINIBATCH, _VT.FETCH_LIST, _VT.RAW)
_U32, _I32, _U64 = struct.Struct("<I"), struct.Struct("<i"), struct.Struct("<Q")


def _umask():
    """The process umask, read without changing it where Linux allows (thread-safe)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        # No /proc (not Linux): read the umask by setting and restoring it below.
        mask = None
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --------------------------------------------------------------- file writing
def _atomic_write(path, chunks):
    """Write the bytes-like ``chunks`` to ``path`` all or nothing."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=folder)
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):  # mkstemp makes 0600; give what open() would
                os.fchmod(f.fileno(), 0o666 & ~_umask())
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        with contextlib.suppress(OSError):  # make the rename durable where the OS allows
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
    except OSError as exc:
        raise FluidscopeError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise LoadError(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from exc


# ------------------------------------------------------------------- programs
def _program_format(path, error=FluidscopeError):
    name = os.path.basename(os.fspath(path))
    if name.endswith(("__model__", ".pdmodel", ".paddle")):
        return "binary"
    if name.endswith((".pbtxt", ".txt")):
        return "text"
    raise error(f"{os.fspath(path)}: unknown program file type; use .pdmodel (binary, what "
                f"Paddle and Netron read) or .pbtxt (text)")


def _program_chunks(desc, fmt):
    if fmt == "binary":
        yield desc.SerializeToString(deterministic=True)
    else:
        yield text_format.MessageToString(desc).encode("utf-8")


def save_program(desc, path, validate=True):
    """Write ``desc`` (a ProgramDesc) to ``path``: binary for ``.pdmodel``, text for ``.pbtxt``.

    With ``validate`` the program is checked first (``ValidationError`` lists every
    problem); the file is replaced atomically."""
    fmt = _program_format(path)
    if validate:
        validate_program(desc)
    elif not desc.IsInitialized():
        raise FluidscopeError(f"cannot save {os.fspath(path)}: missing required fields "
                              f"{desc.FindInitializationErrors()}")
    _atomic_write(path, _program_chunks(desc, fmt))


class _WireError(Exception):
    def __init__(self, pos, path, what):
        super().__init__(f"at byte {pos}{f' ({path})' if path else ''}: {what}")


def _varint(data, pos, end, path):
    value, shift, start = 0, 0, pos
    while True:
        if pos >= end:
            raise _WireError(start, path, "truncated varint (the data ends inside a number)")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise _WireError(start, path, "varint longer than 10 bytes")


def _walk_wire(data, pos, end, message, path=""):
    """Check the protobuf wire format of ``data[pos:end]`` against ``message`` (a
    Descriptor); raise ``_WireError`` at the first byte that is wrong."""
    counts = {}
    while pos < end:
        tag_pos = pos
        tag, pos = _varint(data, pos, end, path)
        number, wire = tag >> 3, tag & 7
        field = message.fields_by_number.get(number) if message else None
        name = field.name if field else f"field {number}"
        if number == 0 or wire not in (0, 1, 2, 5):
            raise _WireError(tag_pos, path, f"invalid tag 0x{tag:x} (field {number}, wire "
                                            f"type {wire}); this is not a ProgramDesc here")
        if wire == 0:
            _, pos = _varint(data, pos, end, path)
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            length, pos = _varint(data, pos, end, path)
            if pos + length > end:
                raise _WireError(tag_pos, path, f"{name} claims {length} bytes but only "
                                                f"{end - pos} remain (truncated file?)")
            k = counts[name] = counts.get(name, -1) + 1
            sub = f"{path}.{name}" if path else name
            if field is not None and field.is_repeated:
                sub += f"[{k}]"
            if field is not None and field.type == _descriptor.FieldDescriptor.TYPE_MESSAGE:
                _walk_wire(data, pos, pos + length, field.message_type, sub)
            elif field is not None and field.type == _descriptor.FieldDescriptor.TYPE_STRING:
                try:
                    bytes(data[pos:pos + length]).decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _WireError(pos + exc.start, sub, "invalid UTF-8 in a string") from None
            pos += length
        if pos > end:
            raise _WireError(tag_pos, path, f"{name} runs past the end of its message")


_OLD_NAMES = [  # Paddle 2.x text names -> 3.x names (the wire numbers are the same)
    (re.compile(r"^(\s*)lod_tensor(\s*\{)", re.M), r"\1dense_tensor\2"),
    (re.compile(r"^(\s*)lod_level(\s*:)", re.M), r"\1legacy_lod_level\2"),
    (re.compile(r"^(\s*(?:type|data_type)\s*:\s*)LOD_TENSOR_ARRAY\b", re.M),
     r"\1DENSE_TENSOR_ARRAY"),
    (re.compile(r"^(\s*(?:type|data_type)\s*:\s*)LOD_TENSOR\b", re.M), r"\1DENSE_TENSOR"),
]


def _parse_program(path, data, fmt):
    if fmt == "binary":
        if data[:1] in (b"{", b"["):  # never a ProgramDesc's first byte (group tags)
            raise LoadError(f"{path}: this is text, not a binary ProgramDesc (a JSON file "
                            f"from Paddle 3's PIR? save with FLAGS_enable_pir_api=0)")
        try:
            _walk_wire(memoryview(data), 0, len(data), pb.ProgramDesc.DESCRIPTOR)
            return pb.ProgramDesc.FromString(data)
        except _WireError as exc:
            raise LoadError(f"{path}: not a valid binary ProgramDesc: {exc}") from None
        except Exception as exc:  # the C parser's DecodeError and anything else it raises
            raise LoadError(f"{path}: not a valid binary ProgramDesc: {exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(f"{path}: not UTF-8 text (byte {exc.start}); a .pbtxt file is "
                        f"protobuf text format") from None
    for pattern, new in _OLD_NAMES:
        text = pattern.sub(new, text)
    try:
        return text_format.Parse(text, pb.ProgramDesc())
    except text_format.ParseError as exc:
        raise LoadError(f"{path}: not a ProgramDesc in text format: {exc}") from None
    except Exception as exc:
        raise LoadError(f"{path}: not a ProgramDesc in text format: {exc}") from None


def load_program(path):
    """Read a ProgramDesc from ``path`` (binary ``.pdmodel`` or text ``.pbtxt``).

    The program is validated; any problem raises ``LoadError`` naming the file."""
    fmt = _program_format(path, LoadError)
    path = os.fspath(path)
    data = _read(path)
    if not data:
        raise LoadError(f"{path}: the file is empty; expected a ProgramDesc")
    desc = _parse_program(path, data, fmt)
    problems = find_problems(desc)
    if problems:
        hint = ("; this does not look like a ProgramDesc (a Paddle .pdmodel starts with "
                "byte 0x0a)" if len(desc.blocks) == 0 else "")
        raise LoadError("\n  - ".join(
            [f"{path}: invalid program ({len(problems)} problem"
             f"{'s' if len(problems) > 1 else ''}){hint}:"] + problems))
    return desc


# ----------------------------------------------------------------- parameters
def _as_array(name, value):
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


def _params_chunks(records):
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
    records = [_as_array(name, tensors[name]) for name in sorted(tensors)]
    _atomic_write(path, _params_chunks(records))


class _Reader:
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


def _read_tensor(r, name, var_type, dims):
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
    r = _Reader(path, memoryview(_read(path)))
    out = {}
    for k, (name, var_type, dims) in enumerate(norm):
        if r.pos == len(r.data):
            raise LoadError(f"{path}: the file ends at byte {r.pos} after {k} tensors; var "
                            f"'{name}' and {len(norm) - k - 1} more are missing (the program "
                            f"has {len(norm)} persistable vars)")
        out[name] = _read_tensor(r, name, var_type, dims)
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


# ------------------------------------------------------ parameters <-> scope
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
            raise FluidscopeError(f"parameter '{name}' has no value in the scope; run the "
                                  f"startup program (or load the parameters) first")
        tensor = var.get_tensor()
        array = np.asarray(to_host(tensor.value))
        want = to_numpy_dtype(var_type)
        if array.dtype != want or len(dims) != array.ndim or any(
                d >= 0 and d != s for d, s in zip(dims, array.shape)):
            raise FluidscopeError(f"parameter '{name}': the scope holds {array.dtype} "
                                  f"{list(array.shape)}, the program declares {want} {dims}")
        tensors[name] = LoDTensor(array, tensor.lod()) if tensor.lod() else array
    save_params(path, tensors)


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


# -------------------------------------------------------------- inference export
def save_inference_model_files(path_prefix, desc, feed_names, fetch_names, scope):
    """Prune ``desc`` for inference and write ``<prefix>.pdmodel`` and ``<prefix>.pdiparams``
    (parameter values from ``scope``). Returns the pruned ProgramDesc."""
    prefix = os.fspath(path_prefix)
    if not os.path.basename(prefix) or os.path.isdir(prefix):
        raise FluidscopeError(f"'{prefix}' is a folder; give a path prefix such as "
                              f"'{os.path.join(prefix, 'model')}'")
    pruned = prune_for_inference(desc, feed_names, fetch_names)
    folder = os.path.dirname(os.path.abspath(prefix))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise FluidscopeError(f"cannot create {folder}: {exc.strerror or exc}") from exc
    # Parameters first: a scope without values fails before any file is replaced.
    save_scope_params(prefix + ".pdiparams", pruned, scope)
    save_program(pruned, prefix + ".pdmodel")
    return pruned


def _holder_names(path, desc, type):
    cols = {}
    for op in desc.blocks[0].ops:
        if op.type != type:
            continue
        col = next(a.i for a in op.attrs if a.name == "col")
        names = [n for v in (op.outputs if type == "feed" else op.inputs) for n in v.arguments]
        if col in cols or len(names) != 1:
            raise LoadError(f"{path}: {type} op with col {col} is repeated or malformed")
        cols[col] = names[0]
    if sorted(cols) != list(range(len(cols))):
        raise LoadError(f"{path}: {type} cols {sorted(cols)} are not 0..{len(cols) - 1}")
    return [cols[c] for c in range(len(cols))]


def load_inference_model_files(path_prefix, scope, place=None):
    """Read ``<prefix>.pdmodel`` and ``<prefix>.pdiparams``; put the parameters in
    ``scope`` (on ``place``). Returns (desc, feed names in col order, fetch names in col
    order)."""
    prefix = os.fspath(path_prefix)
    desc = load_program(prefix + ".pdmodel")
    feeds = _holder_names(prefix + ".pdmodel", desc, "feed")
    fetches = _holder_names(prefix + ".pdmodel", desc, "fetch")
    try:
        has_params = bool(param_specs(desc))
    except LoadError as exc:
        raise LoadError(f"{prefix}.pdmodel: {exc}") from None
    if has_params or os.path.exists(prefix + ".pdiparams"):
        load_scope_params(prefix + ".pdiparams", desc, scope, place)
    return desc, feeds, fetches


__all__ = [
    "PADDLE_VERSION", "save_program", "load_program", "save_params", "load_params",
    "param_specs", "save_scope_params", "load_scope_params", "prune_for_inference",
    "save_inference_model_files",
    "load_inference_model_files",
]  # PADDLE_VERSION: the version written into exported programs (3.3.1)
