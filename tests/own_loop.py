"""Run a coroutine on an event loop of its own, in a thread of its own.

After the browser tests, Playwright's sync API keeps an event loop running in the main
thread for the rest of the session, so ``asyncio.run`` there fails ("cannot be called
from a running event loop") in whatever test comes later in a full run."""
import asyncio
import threading


def run_in_own_loop(make_coroutine, timeout=60):
    """``asyncio.run(make_coroutine())`` in a new thread; its result, or its exception
    raised here. Fails when it has not finished within ``timeout`` seconds."""
    outcome = {}

    def run():
        try:
            outcome["result"] = asyncio.run(make_coroutine())
        except BaseException as exc:  # noqa: BLE001  re-raised in the test's thread
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=timeout)
    assert not worker.is_alive(), f"the coroutine did not finish within {timeout} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
