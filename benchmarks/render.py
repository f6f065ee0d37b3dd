"""Graph rendering of a 1,000-op program: ``program_to_dot`` alone, and DOT + SVG.

The program: 125 ``fc(16, relu)`` layers -> ``mean``, its backward (``append_backward``)
and an SGD update of every parameter: 1,003 ops (375 forward, 378 backward including
the loss seed, 250 ``sgd``) and about 1,250 variables. Timed, median of ``--repeats``:

* ``program_to_dot_ms``: the DOT text (``mode="all"``, shapes on edges, grad ops
  paired with their forward ops), no layout;
* ``total_ms``: ``program_to_dot`` + ``dot_to_svg`` with the system Graphviz, the time
  a GraphView takes to show the program; ``svg_ms`` is the layout alone;
* ``forward_total_ms`` (``mode="forward"``) and ``collapsed_total_ms``
  (``collapse=True``: one box per layer) for the two lighter views.

The target is ``total_ms`` <= 2,000. Without Graphviz the SVG figures are null. The
rendering runs no BLAS, so ``--threads`` changes nothing here; prints one JSON line.

    python benchmarks/render.py [--repeats 5]
"""
import re
import subprocess
import sys

import _harness

ARGS = _harness.start(__doc__.splitlines()[0], default_repeats=5)

import fluidscope.designer as fd  # noqa: E402
from fluidscope.widgets.render import dot_to_svg, has_dot, program_to_dot  # noqa: E402

LAYERS = 125
WIDTH = 16
TARGET_MS = 2000.0


def mlp_program():
    """The 1,003-op training program described in the module docstring."""
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        h = fd.data("x", [None, WIDTH], dtype="float32")
        for _ in range(LAYERS):
            h = fd.fc(h, WIDTH, act="relu")
        fd.optimizer.SGD(learning_rate=0.01).minimize(fd.mean(h))
    return main


def graphviz_version():
    done = subprocess.run(["dot", "-V"], capture_output=True, text=True)
    found = re.search(r"version (\S+)", done.stderr + done.stdout)
    return found.group(1) if found else "unknown"


def main():
    program = mlp_program()
    ops = len(program.desc.blocks[0].ops)
    dot = program_to_dot(program)
    if has_dot():  # check the whole path once before timing it
        svg = dot_to_svg(dot)
        assert svg.startswith("<svg") and 'id="op:0:0"' in svg, "the SVG lacks the ops"

    peers = {"program_to_dot": lambda: program_to_dot(program)}
    if has_dot():
        peers["total"] = lambda: dot_to_svg(program_to_dot(program))
        peers["svg"] = lambda: dot_to_svg(dot)
        peers["forward_total"] = lambda: dot_to_svg(program_to_dot(program, mode="forward"))
        peers["collapsed_total"] = lambda: dot_to_svg(program_to_dot(program, collapse=True))
    times = _harness.measure(peers, calls=1, repeats=ARGS.repeats, warmup_calls=1)
    ms = {name: _harness.rounded(t["median"], "ms") for name, t in times.items()}
    total = ms.get("total")
    result = {
        "benchmark": "render",
        "ops": ops, "program": f"{LAYERS} fc({WIDTH}, relu) layers, mean, backward, SGD",
        "dot_nodes": len(re.findall(r"^\s*\S+ \[label=", dot, re.M)),
        "dot_edges": dot.count(" -> "),
        "graphviz": graphviz_version() if has_dot() else None,
        "python": sys.version.split()[0],
        "repeats": ARGS.repeats,
        "program_to_dot_ms": ms["program_to_dot"],
        "svg_ms": ms.get("svg"),
        "total_ms": total,
        "forward_total_ms": ms.get("forward_total"),
        "collapsed_total_ms": ms.get("collapsed_total"),
        "target_ms": TARGET_MS,
        "meets_target": None if total is None else total <= TARGET_MS,
    }
    _harness.emit(result)


if __name__ == "__main__":
    main()
