"""Did ``Executor.run`` get slower? Today's engine against an older commit's, one process.

The engine of ``--before`` (a git ref; default 143a01f, the last commit before the engine
became sub-packages) is extracted with ``git archive`` into a temporary directory and
imported as a second, independent package next to today's ``fluidscope.engine``. Both
executors then run the same designer programs on the same scopes and feeds, timed in
interleaved rounds (``_harness.measure``), so machine drift touches both alike:

* ``mlp``: one SGD step of the MLP of ``mlp_step.py``;
* ``lstm_group`` / ``lstm_fused``: forward + backward of ``lstm.py``'s 64 -> 128 LSTMs.

Before timing, the script checks both engines fetch the same values (to float32 rounding). Target:
``now / before`` <= 1.02. Prints one JSON line.

    python benchmarks/plain_run_regression.py [--before REF] [--repeats 9]
"""
import argparse
import importlib
import io
import pathlib
import subprocess
import sys
import tarfile
import tempfile

import _harness

OWN = argparse.ArgumentParser(add_help=False)
OWN.add_argument("--before", default="143a01f",
                 help="git ref of the engine to compare with (default: before the engine became sub-packages)")
OWN_ARGS, sys.argv[1:] = OWN.parse_known_args()
ARGS = _harness.start(__doc__.splitlines()[0])

import numpy as np  # noqa: E402  (after the thread count is pinned)

from debugger import lstm_peers, mlp_peers  # noqa: E402

TARGET_NOW_OVER_BEFORE = 1.02
CALLS = 4
WARMUP_CALLS = 3
ROOT = pathlib.Path(__file__).resolve().parent.parent
OLD_PACKAGE = "fluidscope_engine_before"


def import_old_engine(ref, into):
    """Today's tree is untouched: ``git archive REF engine`` is unpacked under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref, "engine"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (pathlib.Path(into) / "engine").rename(pathlib.Path(into) / OLD_PACKAGE)
    sys.path.insert(0, str(into))
    importlib.import_module(OLD_PACKAGE)
    # The tensor module moved into runtime/ when the engine became sub-packages.
    tensor = (f"{OLD_PACKAGE}.tensor" if (pathlib.Path(into) / OLD_PACKAGE / "tensor.py").exists()
              else f"{OLD_PACKAGE}.runtime.tensor")
    return importlib.import_module(f"{OLD_PACKAGE}.executor"), importlib.import_module(tensor)


def old_feed(feed, old_tensor):
    """The old engine knows only its own LoDTensor class."""
    out = {}
    for name, value in feed.items():
        lod = value.lod() if hasattr(value, "lod") else None
        out[name] = old_tensor.LoDTensor(np.asarray(value), lod) if lod else value
    return out


def main():
    keep_limit = _harness.limit_threads(ARGS.blas_threads)  # noqa: F841 (keeps the cap)
    result = {"benchmark": "plain_run_regression", "before": OWN_ARGS.before,
              "blas": _harness.blas_description(), "target_now_over_before": TARGET_NOW_OVER_BEFORE}
    with tempfile.TemporaryDirectory() as tmp:
        old_executor, old_tensor = import_old_engine(OWN_ARGS.before, tmp)
        for name, peers in (("mlp", mlp_peers()), ("lstm_group", lstm_peers(False)),
                            ("lstm_fused", lstm_peers(True))):
            old = old_executor.Executor()
            feed_old = old_feed(peers.feed, old_tensor)

            def before(peers=peers, old=old, feed_old=feed_old):
                return old.run(peers.program, feed=feed_old, fetch_list=peers.fetch,
                               scope=peers.scope)

            saved = {n: peers.scope.find_var(n).get_tensor().value
                     for n in peers.scope.local_var_names()}
            expected = peers.run()
            for n, v in saved.items():
                peers.scope.find_var(n).get_tensor().value = v
            for a, b in zip(expected, before()):
                # float32 rounding may differ where a kernel's formula changed (sigmoid)
                scale = max(1.0, float(np.abs(a).max()))
                assert np.abs(a - b).max() <= 1e-4 * scale, (
                    f"{name}: the two engines fetch different values")
            times = _harness.measure({"now": peers.run, "before": before}, CALLS, ARGS.repeats,
                                     WARMUP_CALLS, _harness.settle_time(ARGS))
            now, then = times["now"]["median"], times["before"]["median"]
            result[name] = {"now_ms": _harness.rounded(now, "ms"),
                            "before_ms": _harness.rounded(then, "ms"),
                            "now_over_before": round(now / then, 3)}
    result["met"] = all(result[n]["now_over_before"] <= TARGET_NOW_OVER_BEFORE
                        for n in ("mlp", "lstm_group", "lstm_fused"))
    _harness.emit(result)


if __name__ == "__main__":
    main()
