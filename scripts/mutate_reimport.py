"""Judge again, with their module imported under the mutant, the engine/kernels mutants
that mutmut reported as surviving (``scripts/mutate.py engine/kernels --reimport``).

Why: mutmut forks each mutant from a pytest process that imported the kernels before
the fork, so a mutant of code that runs at import time (the factories that build
kernels and infer functions, the ``register`` calls) is never active in the child and
"survives" whatever the tests check. Here a child is forked per mutant from a parent
that imported everything; the child turns the mutant on, removes the ops the mutated
module registered and imports the module again (its import-time code now runs
mutated), then runs the op-matrix checks (forward against the reference, inferred
shapes, float64 gradient) of the cases of those ops and of the tests mutmut's stats saw
reach the mutated function.

Verdicts: a check that fails or raises kills the mutant. A module that cannot be
imported again on its own (its ops are registered by another module: activation,
unary_*, loss, xshape) is "not checked", never "killed": a failure of this harness must
not count as a kill. Run by scripts/mutate.py in its work folder:

    python scripts/mutate_reimport.py WORK NAMES.txt OUT.json
"""
from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
from pathlib import Path

SURVIVED, KILLED, NOT_CHECKED, NO_CHECKS = 0, 1, 3, 5
VERDICT = {SURVIVED: "survived", KILLED: "killed", NOT_CHECKED: "not checked",
           NO_CHECKS: "not checked"}
TIMEOUT_S = 400


def setup(work: Path):
    """Import the work folder's packages and op-matrix tests; return what children need."""
    os.chdir(work / "mutants")
    sys.path[:0] = [str(work / "mutants" / "src"), str(work / "mutants" / "tests"),
                    str(work / "mutants" / "tests" / "op_matrix")]
    os.environ["MUTANT_UNDER_TEST"] = ""
    stats = json.loads(Path("mutmut-stats.json").read_text())["tests_by_mangled_function_name"]
    import fluidscope.engine  # noqa: F401  registers every op
    import test_op_matrix as matrix
    checks = {"test_forward_matches_reference": (matrix.test_forward_matches_reference, matrix.CASES),
              "test_inferred_shapes_match_actual": (matrix.test_inferred_shapes_match_actual,
                                                    matrix.SHAPE_CASES),
              "test_gradient_float64_central_difference": (
                  matrix.test_gradient_float64_central_difference, matrix.GRAD_CASES)}
    return stats, checks


def ops_of(module_stem: str) -> set:
    """The ops (and their grad ops) that the kernels module ``module_stem`` registered."""
    from fluidscope.engine.ir import registry
    ops = registry.all_ops()
    fwd = {t for t, d in ops.items() if Path(d.site.split(":")[0]).stem == module_stem}
    return fwd | {t for t, d in ops.items() if d.grad_of in fwd}


def judge(name: str, stats: dict, checks: dict) -> int:
    """In the forked child: the exit code for mutant ``name``."""
    import pytest
    from mutmut.mutation.trampoline import set_mutant_under_test
    from fluidscope.engine.ir import registry
    stem = name.split(".")[3]  # fluidscope.engine.kernels.<stem>.x_<function>__mutmut_<n>
    os.environ["MUTANT_UNDER_TEST"] = name
    set_mutant_under_test(name)
    ops = ops_of(stem)
    try:
        if ops:
            for op in ops:
                registry._OPS.pop(op)  # the module registers them again, mutated
            importlib.reload(importlib.import_module(f"fluidscope.engine.kernels.{stem}"))
        if not ops <= set(registry.all_ops()):
            return NOT_CHECKED  # another module registers some of them
    except Exception:
        return NOT_CHECKED
    chosen = [(fn, c) for fn, cases in checks.values() for c in cases if c.op in ops]
    for node in stats.get(name.rsplit("__mutmut_", 1)[0], []):
        test, _, case_id = node.split("::")[-1].partition("[")
        if test in checks:
            fn, cases = checks[test]
            chosen += [(fn, c) for c in cases if c.id == case_id.rstrip("]")]
    seen = set()
    for fn, case in chosen:
        if (fn, id(case)) in seen:
            continue
        seen.add((fn, id(case)))
        try:
            fn(case)
        except pytest.skip.Exception:
            continue
        except Exception:
            return KILLED
    return SURVIVED if seen else NO_CHECKS


def main(work: Path, names: list, out: Path, jobs: int) -> None:
    stats, checks = setup(work)
    done = json.loads(out.read_text()) if out.exists() else {}
    todo = [n for n in names if n not in done]
    running = {}
    while todo or running:
        while todo and len(running) < jobs:
            name = todo.pop(0)
            pid = os.fork()
            if pid == 0:
                signal.alarm(TIMEOUT_S)
                code = NOT_CHECKED
                try:
                    code = judge(name, stats, checks)
                finally:
                    os._exit(code)
            running[pid] = (name, time.time())
        pid, status = os.wait()
        name, began = running.pop(pid)
        if os.WIFEXITED(status):
            verdict = VERDICT.get(os.WEXITSTATUS(status), "not checked")
        else:  # the alarm: a mutant that loops
            verdict = "timeout" if os.WTERMSIG(status) == signal.SIGALRM else "not checked"
        done[name] = verdict
        out.write_text(json.dumps(done, indent=0))
        print(f"{verdict:12} {time.time() - began:5.0f}s {name}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]).read_text().split(), Path(sys.argv[3]),
         int(os.environ.get("JOBS", "2")))
