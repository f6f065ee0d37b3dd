"""What the debugger costs: a session run to the end vs ``Executor.run``, same program.

Three programs, each timed in one process at one BLAS thread:

* ``mlp``: one SGD training step of the MLP of ``mlp_step.py`` (784-256-256-10, batch 128);
* ``lstm_group``: forward + backward of the ``lstmemory_group`` LSTM of ``lstm.py``
  (64 -> 128, 32 sequences);
* ``lstm_fused``: the same with the fused ``dynamic_lstm``.

Peers per program: ``run`` (``exe.run``) and ``session`` (``exe.debug(...)``, then
``continue_()`` with no breakpoints and ``fetch()``: every op recorded for ``back()``).
A third peer, ``session_stepped``, steps into every op of every frame (``events()``),
the worst case. Before timing, the script checks that the session fetches the same
values as the run. Target: ``session / run`` <= 1.3. Prints one JSON line.

    python benchmarks/debugger.py [--repeats 7]
"""
import _harness

ARGS = _harness.start(__doc__.splitlines()[0], default_repeats=7)

import numpy as np  # noqa: E402  (after the thread count is pinned)

import fluidscope.designer as fd  # noqa: E402
from lstm import FluidscopeLSTM, make_problem  # noqa: E402
from mlp_step import BATCH, SIZES, FluidscopeMLP  # noqa: E402

TARGET_SESSION_OVER_RUN = 1.3
CALLS = 4
WARMUP_CALLS = 2


class Peers:
    """``run``, ``session`` and ``session_stepped`` of one program, feed and fetch list."""

    def __init__(self, exe, program, feed, fetch, scope):
        self.exe, self.program, self.feed, self.fetch, self.scope = exe, program, feed, fetch, scope

    def run(self):
        return self.exe.run(self.program, feed=self.feed, fetch_list=self.fetch, scope=self.scope)

    def session(self):
        sess = self.exe.debug(self.program, feed=self.feed, fetch_list=self.fetch,
                              scope=self.scope)
        sess.continue_()
        return sess.fetch()

    def session_stepped(self):
        sess = self.exe.debug(self.program, feed=self.feed, fetch_list=self.fetch,
                              scope=self.scope)
        for _ in sess.events():
            continue
        return sess.fetch()

    def check(self):
        """The session computes what the run does (parameters restored in between)."""
        saved = {n: self.scope.find_var(n).get_tensor().value
                 for n in self.scope.local_var_names() if self.scope.find_var(n).is_initialized()}
        expected = self.run()
        for name, value in saved.items():
            self.scope.find_var(name).get_tensor().value = value
        for peer in (self.session, self.session_stepped):
            got = peer()
            for name, value in saved.items():
                self.scope.find_var(name).get_tensor().value = value
            for a, b in zip(expected, got):
                assert np.array_equal(a, b), f"{peer.__name__} fetched other values than exe.run"


def mlp_peers():
    rng = np.random.default_rng(0)
    batches = [(rng.random((BATCH, SIZES[0]), dtype=np.float32),
                rng.integers(0, SIZES[-1], (BATCH, 1), dtype=np.int64))]
    mlp = FluidscopeMLP(batches)
    x, label = batches[0]
    return Peers(mlp.exe, mlp.main, {"x": x, "label": label}, mlp.fetch, mlp.scope)


def lstm_peers(fused):
    lstm = FluidscopeLSTM(make_problem(64, 128, 32, seed=1), fused=fused)
    return Peers(lstm.exe, lstm.main, lstm.feed, lstm.fetch, lstm.scope)


def main():
    keep_limit = _harness.limit_threads(ARGS.blas_threads)  # noqa: F841 (keeps the cap)
    programs = {"mlp": mlp_peers(), "lstm_group": lstm_peers(False),
                "lstm_fused": lstm_peers(True)}
    result = {"benchmark": "debugger", "blas": _harness.blas_description(),
              "target_session_over_run": TARGET_SESSION_OVER_RUN}
    with fd.scope_guard(fd.Scope()):
        for name, peers in programs.items():
            peers.check()
            times = _harness.measure(
                {"run": peers.run, "session": peers.session,
                 "session_stepped": peers.session_stepped},
                CALLS, ARGS.repeats, WARMUP_CALLS, _harness.settle_time(ARGS))
            run = times["run"]["median"]
            result[name] = {
                "run_ms": _harness.rounded(run, "ms"),
                "session_ms": _harness.rounded(times["session"]["median"], "ms"),
                "session_stepped_ms": _harness.rounded(times["session_stepped"]["median"], "ms"),
                "session_over_run": round(times["session"]["median"] / run, 3),
                "stepped_over_run": round(times["session_stepped"]["median"] / run, 3),
            }
    result["met"] = all(result[n]["session_over_run"] <= TARGET_SESSION_OVER_RUN
                        for n in programs)
    _harness.emit(result)


if __name__ == "__main__":
    main()
