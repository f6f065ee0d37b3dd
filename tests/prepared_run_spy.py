"""The ``replays`` fixture of the prepared-run tests: import it into a test module
(``from prepared_run_spy import replays``) and pytest hands each test a list that gets,
per ``Executor.run`` that reached a prepared run, whether it ran it (True) or fell back to
the general path (False)."""
import pytest

from fluidscope.engine.runtime.replay import PreparedRun


@pytest.fixture
def replays(monkeypatch):
    taken, start = [], PreparedRun.start

    def spy(self, *args):
        run = start(self, *args)
        taken.append(run is not None)
        return run

    monkeypatch.setattr(PreparedRun, "start", spy)
    return taken
