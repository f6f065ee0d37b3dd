"""Opening what a person names on the command line: a program file, a path prefix or a design.

``open_model(path)`` accepts

* a program file: ``.pdmodel`` / ``.paddle`` / ``__model__`` (binary) or ``.pbtxt`` /
  ``.txt`` (text), with its parameters read from the ``.pdiparams`` next to it when
  there is one (``model.pdmodel`` or ``model.pbtxt`` -> ``model.pdiparams``);
* a path prefix, ``model`` for ``model.pdmodel`` (what ``save_inference_model`` takes);
* a design file (``.fsdesign.json``, or any ``.json`` whose ``format`` says it is one),
  built into its programs.

A Paddle 3 PIR program (``model.json``) is refused with how to save the legacy format
(``engine.io.pir``). Every problem is a ``FluidscopeError`` naming the file.
"""
from __future__ import annotations

import dataclasses
import json
import os

from fluidscope.designer import Design, Program
from fluidscope.designer.design.files import FORMAT as DESIGN_FORMAT
from fluidscope.engine import LoadError, Scope
from fluidscope.engine import io as engine_io
from fluidscope.engine.io import pir
from fluidscope.engine.io.files import read_file
from fluidscope.engine.io.programs import program_format

DESIGN_SUFFIX = ".fsdesign.json"
PROGRAM_SUFFIXES = (".pdmodel", ".paddle", ".pbtxt", ".txt")


@dataclasses.dataclass
class Model:
    """What a path names. ``desc``: the ProgramDesc (a design's built main program);
    ``kind``: "binary", "text" or "design"; ``params_path``: the ``.pdiparams`` next to a
    program file, None when there is none; ``design``: the Design of a design file."""
    path: str
    kind: str
    desc: object
    params_path: str | None = None
    design: Design | None = None

    @property
    def program(self) -> Program:
        return Program.from_desc(self.desc)


def is_design_path(path) -> bool:
    return os.fspath(path).endswith(DESIGN_SUFFIX)


def params_path_of(program_path):
    """``<stem>.pdiparams`` of ``<stem>.pdmodel`` (or .pbtxt...), where Paddle writes it."""
    stem, ext = os.path.splitext(os.fspath(program_path))
    return (stem if ext in PROGRAM_SUFFIXES else os.fspath(program_path)) + ".pdiparams"


def resolve(path) -> str:
    """The file ``path`` names: itself when it exists or has a known suffix, else
    ``<path>.pdmodel`` for a prefix. Raises LoadError for what names nothing readable."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise LoadError(f"{path} is a folder; give a model file (model.pdmodel, "
                        f"model.pbtxt, design.fsdesign.json) or a path prefix (model)")
    if os.path.exists(path) or path.endswith((".json", *PROGRAM_SUFFIXES, "__model__")):
        return path
    if os.path.exists(path + ".pdmodel"):
        return path + ".pdmodel"
    pir.check_no_pir_instead(path + ".pdmodel")  # Paddle 3 wrote <prefix>.json instead
    raise LoadError(f"{path}: no such file (nor {path}.pdmodel)")


def json_kind(path) -> str:
    """"design" for a design file in a ``.json``; LoadError for a PIR program or other
    JSON (nothing in it is executed: it is parsed as data)."""
    data = read_file(path)
    version = pir.pir_version(data)
    if version is not None:
        raise pir.pir_error(path, version)
    try:
        loaded = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise LoadError(f"{path}: not readable JSON: {exc}") from None
    if isinstance(loaded, dict) and loaded.get("format") == DESIGN_FORMAT:
        return "design"
    raise LoadError(f"{path}: a JSON file that is neither a fluidscope design "
                    f"(format {DESIGN_FORMAT!r}) nor a Paddle PIR program")


def open_design(path) -> Model:
    """A design file, built (forward, backward and optimizer, as the design says) in a
    scope of its own; a node that does not build is an error naming it."""
    design = Design.load(path)
    built = design.build(scope=Scope())
    problems = [f"node '{n}': {m}" for n, m in built.errors.items()]
    problems += [f"node '{n}' waits on '{w}'" for n, w in built.waiting.items()]
    if built.optimizer_error:
        problems.append(f"optimizer: {built.optimizer_error}")
    if problems:
        raise LoadError(f"{path}: the design does not build: " + "; ".join(problems))
    return Model(path, "design", built.main.desc, design=design)


def open_model(path) -> Model:
    """The program (and design) ``path`` names; see the module docstring."""
    path = resolve(path)
    if is_design_path(path) or (path.endswith(".json") and json_kind(path) == "design"):
        return open_design(path)
    kind = program_format(path, LoadError)
    desc = engine_io.load_program(path)
    params = params_path_of(path)
    return Model(path, kind, desc, params if os.path.isfile(params) else None)


def param_specs(model: Model):
    """(name, dtype, dims) of the persistable vars a ``.pdiparams`` of the model holds."""
    try:
        return engine_io.param_specs(model.desc)
    except LoadError as exc:
        raise LoadError(f"{model.path}: {exc}") from None


def load_params(model: Model):
    """name -> array of the model's ``.pdiparams``, each checked against the program's
    declaration; empty when there is no such file."""
    if model.params_path is None:
        return {}
    return engine_io.load_params(model.params_path, param_specs(model))


def load_params_into(model: Model, scope):
    """Put the model's parameters into ``scope``; a LoadError when the program declares
    parameters and no ``.pdiparams`` lies next to it."""
    specs = param_specs(model)
    if model.params_path is None:
        if specs:
            raise LoadError(
                f"{model.path}: the program has {len(specs)} persistable var"
                f"{'s' if len(specs) > 1 else ''} ({specs[0][0]}, ...) and there is no "
                f"{params_path_of(model.path)} to read their values from")
        return []
    return engine_io.load_scope_params(model.params_path, model.desc, scope)


__all__ = ["Model", "DESIGN_SUFFIX", "PROGRAM_SUFFIXES", "is_design_path", "params_path_of",
           "resolve", "json_kind", "open_design", "open_model", "param_specs", "load_params",
           "load_params_into"]
