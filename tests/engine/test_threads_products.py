"""What a run measures as its largest product (engine/runtime/threads.py
``largest_product``), exactly: none, a convolution, a batched matmul (issue #17: mutants of
the measure survived test_threads' one MLP)."""
import numpy as np

import fluidscope.designer as fd
from fluidscope.engine.runtime import threads


def measured(build, feed):
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup), fd.unique_name.guard():
        fetch = build()
    scope, exe = fd.Scope(), fd.Executor()
    exe.run(startup, scope=scope)
    plan = exe.prepare(main)
    run = exe.start(main, feed, scope)
    run.run_to_end()
    return threads.largest_product(plan, run.vals), fetch


def test_a_program_without_products_measures_zero():
    work, _ = measured(lambda: fd.scale(fd.data("x", [None, 4], "float32"), 2.0),
                       {"x": np.ones((3, 4), np.float32)})
    assert work == 0


def test_a_convolution_counts_every_window_per_output_channel():
    def build():
        return fd.conv2d(fd.data("img", [None, 3, 8, 8], "float32"), num_filters=4,
                         filter_size=3)
    work, _ = measured(build, {"img": np.ones((2, 3, 8, 8), np.float32)})
    # Input 2x3x8x8 times Filter 4x3x3x3, over the 3 input channels
    assert work == (2 * 3 * 8 * 8) * (4 * 3 * 3 * 3) // 3


def test_a_batched_matmul_counts_rows_of_x_times_all_of_y():
    def build():
        x = fd.data("x", [None, 3, 4], "float32")
        y = fd.data("y", [4, 5], "float32")
        return fd.matmul(x, y)
    work, _ = measured(build, {"x": np.ones((2, 3, 4), np.float32),
                               "y": np.ones((4, 5), np.float32)})
    assert work == (2 * 3) * (4 * 5)
