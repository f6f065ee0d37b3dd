"""``fluidscope run MODEL --feed NAME=FILE.npy ... [-o out.npz]``: run an inference model.

MODEL is a program with ``feed`` and ``fetch`` ops (what ``save_inference_model``
writes: ``model.pdmodel`` + ``model.pdiparams``, or a path prefix, or a ``.pbtxt``
with its ``.pdiparams``). Every feed is a ``.npy`` file, read with
``allow_pickle=False``; its dtype is cast to the declared one where nothing is lost.
The fetched outputs are printed (name, shape, dtype, min/mean/max) or, with ``-o``,
saved to an ``.npz`` under their variable names.
"""
from __future__ import annotations

import argparse
import io

import numpy as np

from fluidscope.engine import Executor, FluidscopeError, LoadError, Scope

from . import info, models, outputs
from .verbs import add_verb


def feed_argument(text):
    """argparse type of ``--feed``: ``NAME=PATH`` -> (NAME, PATH)."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=FILE.npy (e.g. x=x.npy)")
    return name, path


def npz_path(text):
    if not text.endswith(".npz"):
        raise argparse.ArgumentTypeError(f"'{text}' must end in .npz")
    return text


def add_parser(verbs):
    p = add_verb(verbs, "run", "run an inference model on .npy inputs", __doc__)
    p.add_argument("model", help="model.pdmodel, model.pbtxt or a path prefix (model)")
    p.add_argument("--feed", type=feed_argument, action="append", default=[],
                   metavar="NAME=FILE.npy", help="an input: repeat for each feed of the model")
    p.add_argument("-o", "--output", type=npz_path, metavar="OUT.npz",
                   help="save the outputs to an .npz instead of printing a summary")
    p.set_defaults(command=command)
    return p


def command(args):
    model = models.open_model(args.model)
    if model.design is not None:
        raise FluidscopeError(
            f"{model.path} is a design: it holds no trained weights; run an inference "
            f"model (model.pdmodel + model.pdiparams)")
    feeds, fetches = info.inputs_outputs(model)
    if not fetches:
        raise FluidscopeError(
            f"{model.path} has no fetch ops, so it names no outputs: save it with "
            f"save_inference_model (fd.io.save_inference_model)")
    feed = read_feeds(args.feed, feeds)
    if args.output is not None:
        outputs.check_target(args.output)
    scope = Scope()
    models.load_params_into(model, scope)
    values = Executor().run(model.desc, feed=feed, fetch_list=fetches, scope=scope)
    if args.output is None:
        print(summary_table(fetches, values))
        return 0
    buffer = io.BytesIO()
    np.savez(buffer, **dict(zip(fetches, values)))
    outputs.write_bytes(args.output, buffer.getvalue())
    print(f"wrote {args.output} ({', '.join(fetches)})")
    return 0


def read_feeds(given, feeds):
    """name -> array of the ``--feed`` files, checked against the model's feed names."""
    names = [name for name, _ in given]
    repeated = sorted({n for n in names if names.count(n) > 1})
    unknown = [n for n in names if n not in feeds]
    missing = [n for n in feeds if n not in names]
    if repeated:
        raise FluidscopeError(f"--feed {', '.join(repeated)} given more than once")
    if unknown:
        raise FluidscopeError(f"the model has no feed {', '.join(unknown)}; its feeds are "
                              f"{', '.join(feeds) or 'none'}")
    if missing:
        raise FluidscopeError(f"missing --feed for {', '.join(missing)} (the model's feeds: "
                              f"{', '.join(feeds)}); give each as NAME=FILE.npy")
    return {name: read_npy(name, path) for name, path in given}


NPY_MAGIC, ZIP_MAGIC = b"\x93NUMPY", b"PK"


def read_npy(name, path):
    """The array in ``path``, a .npy file (its header checked first; never unpickled)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(NPY_MAGIC))
            if head.startswith(ZIP_MAGIC):
                raise LoadError(f"--feed {name}: {path} is an .npz archive; give one .npy "
                                f"file per feed (np.save)")
            if head != NPY_MAGIC:
                raise LoadError(f"--feed {name}: {path} is not a .npy file (no NUMPY "
                                f"header); write it with np.save")
            f.seek(0)
            return np.load(f, allow_pickle=False)
    except OSError as exc:
        raise LoadError(f"--feed {name}: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # an object array (it would need pickle), a truncated file
        raise LoadError(f"--feed {name}: cannot load {path}: {exc}") from None


def summary(value) -> str:
    """``[2, 3] float32  min -1 mean 0.25 max 2`` (NaN/Inf counted, not folded in)."""
    value = np.asarray(value)
    head = f"[{', '.join(str(d) for d in value.shape)}] {value.dtype}"
    if value.size == 0 or not (np.issubdtype(value.dtype, np.number) or value.dtype == bool):
        return head + ("  empty" if value.size == 0 else "")
    data = value.astype(np.float64)
    finite = np.isfinite(data)
    notes = []
    if not finite.all():
        notes = [f"nan {int(np.isnan(data).sum())}", f"inf {int(np.isinf(data).sum())}"]
        data = data[finite]
    if data.size:
        head += f"  min {data.min():.6g}  mean {data.mean():.6g}  max {data.max():.6g}"
    return "  ".join([head] + notes)


def summary_table(names, values) -> str:
    width = max(len(n) for n in names)
    return "\n".join(f"{n:<{width}}  {summary(v)}" for n, v in zip(names, values))


__all__ = ["feed_argument", "add_parser", "command", "read_feeds", "read_npy", "summary"]
