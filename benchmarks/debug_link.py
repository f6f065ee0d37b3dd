"""What lighting the canvas costs while a debugger steps: a session stepped op by op with
and without a DesignCanvas linked to it.

The model is a canvas design: embedding -> recurrent zone (an fc over the step and a
memory of itself) -> max pool -> fc -> softmax cross-entropy -> mean, with Adam, fed 16
sequences of up to 40 ids, so one run is ~1,000 stops, most of them inside the zone's
frames (forward and backward). Peers, each a fresh session over the same program, timed
interleaved in one process at one BLAS thread:

* ``unlinked``: ``restart()`` then ``step_into()`` to the end, nobody listening;
* ``linked``: the same with the canvas linked as ``canvas.debug()`` links it (a state
  per stop, published at most every 50 ms plus a trailing publish);
* ``linked_every_stop``: linked with no interval (every stop publishes: what the
  throttle saves).

Reports microseconds per stop (medians) and the ratios ``linked_over_unlinked``
(target <= 1.1; also of the fastest blocks, ``_min``, steadier on a loaded machine) and
``every_stop_over_linked``. A linked stop adds one attribute test while a publish is
due (about 0.1 us, measured apart) and a state read and trait set per 50 ms. Ratios, not timed assertions. Prints
one JSON line.

    python benchmarks/debug_link.py [--repeats 7]
"""
import _harness

ARGS = _harness.start(__doc__.splitlines()[0], default_repeats=7)

import numpy as np  # noqa: E402  (after the thread count is pinned)

import fluidscope.designer as fd  # noqa: E402
from fluidscope.widgets import DesignCanvas  # noqa: E402

TARGET = 1.1
CALLS = 5  # runs per timed block (one run is ~10 ms)
VOCAB, WIDTH, SEQUENCES, LONGEST = 50, 32, 16, 40


def design():
    d = fd.Design()
    ids = d.add("data", name="ids", shape=[None, 1], dtype="int64", lod_level=1)
    label = d.add("data", name="label", shape=[None, 1], dtype="int64")
    emb = d.add("embedding", inputs={"input": ids}, size=[VOCAB, WIDTH])
    g = d.add("recurrent_group", name="rnn")
    word = d.add_step_input(g, emb, name="word")
    mem = d.add_memory(g, size=WIDTH, name="state")
    h = d.add("fc", inputs={"input": [word, mem]}, size=WIDTH, act="tanh", group=g, name="h")
    d.link_memory(mem, h)
    d.set_outputs(g, [h])
    pooled = d.add("sequence_pool", inputs={"input": g}, pool_type="max", name="pool")
    logits = d.add("fc", inputs={"input": pooled}, size=2, name="logits")
    cost = d.add("softmax_with_cross_entropy", inputs={"logits": logits, "label": label},
                 name="cost")
    d.set_loss(d.add("mean", inputs={"x": cost}, name="loss"))
    d.set_optimizer("Adam", learning_rate=0.01)
    return d


def feed():
    rng = np.random.default_rng(0)
    lengths = rng.integers(LONGEST // 2, LONGEST + 1, SEQUENCES)
    offsets = [[0] + np.cumsum(lengths).tolist()]
    ids = rng.integers(0, VOCAB, (int(lengths.sum()), 1)).astype("int64")
    return {"ids": fd.LoDTensor(ids, offsets),
            "label": rng.integers(0, 2, (SEQUENCES, 1)).astype("int64")}


def stepper(session):
    def run():
        session.restart()
        while not session.finished:
            session.step_into()
    return run


def main():
    canvas = DesignCanvas(design())
    data = feed()
    sessions = {name: canvas.debug(feed=data).session
                for name in ("unlinked", "linked", "linked_every_stop")}
    # canvas.debug() linked the last one it opened; link each peer as it needs
    canvas.unlink_debugger()
    counters = {}
    peers = {}
    for name, session in sessions.items():
        if name != "unlinked":
            # a canvas per linked peer: one link each, as in a notebook
            own = DesignCanvas(design())
            interval = 0.0 if name == "linked_every_stop" else 0.05
            counters[name] = own.link_debugger(session, min_interval_s=interval)
        peers[name] = stepper(session)
    stops = 0
    session = sessions["unlinked"]
    session.restart()
    while not session.finished:
        session.step_into()
        stops += 1
    times = _harness.measure(peers, calls=CALLS, repeats=ARGS.repeats, warmup_calls=1)
    per_stop = {name: t["median"] / stops for name, t in times.items()}
    for link in counters.values():
        link.flush()
    _harness.emit({
        "benchmark": "debug_link", "blas": _harness.blas_description(), "stops": stops,
        "us_per_stop": {k: _harness.rounded(v, "us") for k, v in per_stop.items()},
        "linked_over_unlinked": round(per_stop["linked"] / per_stop["unlinked"], 3),
        # the fastest block of each: on a loaded machine the medians carry its noise
        "linked_over_unlinked_min": round(times["linked"]["min"] / times["unlinked"]["min"], 3),
        "every_stop_over_linked": round(per_stop["linked_every_stop"] / per_stop["linked"], 3),
        "published_per_run": {k: round(link.published / max(1, link.stops) * stops, 1)
                              for k, link in counters.items()},
        "target_linked_over_unlinked": TARGET,
    })


if __name__ == "__main__":
    main()
