"""What the canvas collector's tests share (``from gc_cycles import Cycle,
clean_gc_state``): garbage only the cyclic collector frees, and an autouse fixture that
checks nothing is frozen or disabled before a test and undoes what the test left."""
import gc

import pytest


class Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self):
        self.me = self


@pytest.fixture(autouse=True)
def clean_gc_state():
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    yield
    gc.unfreeze()
    gc.enable()
