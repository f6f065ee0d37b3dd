"""The fast, fixed subset of mutation testing that CI runs (`make mutate` runs cosmic-ray
over the whole core; scripts/mutate.sh): mutants that once survived the whole suite, each
applied to a copy of the package and run against the tests that now kill it.

The copy is imported through a path shim (fluidscope is a namespace package: a
fluidscope/ folder on PYTHONPATH comes before the editable install), so this checkout is
never modified. Add a surviving mutant here when a new test kills it.
"""
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str       # path in the repository
    old: str        # text replaced (must occur exactly once)
    new: str
    tests: tuple    # pytest arguments that must fail on the mutant


MUTANTS = [
    Mutant("gru_group ignores reverse", "designer/layers/rnn_group.py",
           'delta, name=f"{name}_h")\n\n    return recurrent_group(step, input, reverse=reverse,',
           'delta, name=f"{name}_h")\n\n    return recurrent_group(step, input, reverse=False,',
           ("tests/designer/test_rnn_group.py", "-k", "gru_group")),
    Mutant("restart keeps the random generator", "engine/debug/session.py",
           "set_rng_state(self._initial_rng)", "pass",
           ("tests/engine/test_debugger.py::test_restart_rewinds_the_random_generator",)),
    # the test that kills it once skipped behind importorskip (test_no_skip_on_own_imports.py)
    Mutant("back keeps the random generator", "engine/debug/stepper.py",
           "set_rng_state(record.rng)", "pass",
           ("tests/engine/test_debugger.py::test_back_before_a_random_op_replays_the_same_mask",)),
    # killed by the tests `make mutate` asked for (issue #17)
    Mutant("history trims at exactly its byte limit", "engine/debug/history.py",
           "(self.total_bytes > self.limit_bytes", "(self.total_bytes >= self.limit_bytes",
           ("tests/engine/test_debug_session_contract.py::"
            "test_history_keeps_the_newest_records_under_the_byte_limit",)),
    Mutant("breakpoint on frame 0 not described", "engine/debug/types.py",
           "        if self.frame is not None:\n            parts.append",
           "        if self.frame:\n            parts.append",
           ("tests/engine/test_debug_session_contract.py::"
            "test_a_breakpoint_describes_every_criterion_it_has",)),
    Mutant("typed numbers take Inf", "widgets/canvas/attr_text.py",
           'if value != value or value in (float("inf"), float("-inf")):',
           "if value != value:",
           ("tests/widgets/test_canvas_attr_text_numbers.py::"
            "test_non_finite_or_wordy_numbers_are_refused",)),
    Mutant("a wire leaving a zone reuses a wrong out-link", "widgets/canvas/zone_actions.py",
           "if ref not in outputs:", "if ref in outputs:",
           ("tests/widgets/test_canvas_memory_sizes.py::"
            "test_a_wire_leaving_a_zone_from_a_node_without_an_out_link_makes_one",)),
    Mutant("relinking keeps a memory's size", "widgets/canvas/zone_actions.py",
           'if width and self._design.node(memory).attrs.get("size") != width:',
           "if False:",
           ("tests/widgets/test_canvas_memory_sizes.py::"
            "test_linking_a_memory_resizes_it_to_the_new_width_and_keeps_it_otherwise",)),
    Mutant("canvas lets floats into ids slots", "widgets/canvas/ports.py",
           "if kind is not None and kind not in allowed:",
           'if kind is not None and kind not in allowed and "ids" not in spec.kind:',
           ("tests/widgets/test_canvas_actions.py::"
            "test_python_refuses_float_outputs_into_an_ids_slot",)),
    Mutant("every reduction reads out_dtype", "engine/kernels/reduce.py",
           'if op == "sum" and attrs["out_dtype"] != -1:', 'if attrs["out_dtype"] != -1:',
           ("tests/op_matrix/test_op_matrix.py", "-k", "reduce_mean-out_dtype_not_read")),
    Mutant("sequence_pool on zero rows", "engine/kernels/sequence.py",
           "return a.reshape(n, prod(a.shape[1:]))", "return a.reshape(n, -1)",
           ("tests/property/test_lod_layout_properties.py::test_sequence_pool_over_nested_lod",)),
    Mutant("layer calls drop **attrs", "designer/recording.py",
           # the fast binder's merge: what every plain layer call goes through
           "arguments.update(extra)", "pass",
           # not the property test that found it: which layers its examples draw changes
           # with the palette, so it does not always meet a **attrs layer
           ("tests/designer/test_design_codegen.py::"
            "test_program_to_design_keeps_the_attributes_layers_take_as_keywords",)),
    # engine/runtime (the first was a real bug: a later empty input read the tanh's result)
    Mutant("an op with no output variable overwrites slot 0", "engine/runtime/plan.py",
           "if len(outs) == 1 and isinstance(outs[0], int) and outs[0] != NONE_SLOT:",
           "if len(outs) == 1 and isinstance(outs[0], int):",
           ("tests/engine/test_runtime_mutants_slots.py::"
            "test_an_op_whose_only_output_has_no_variable_leaves_empty_inputs_empty",)),
    Mutant("fetch ops prepared as steps", "engine/runtime/plan.py",
           'if op.type in ("feed", "fetch"):', 'if op.type in ("feed", "FETCH"):',
           ("tests/engine/test_runtime_mutants_plan.py::"
            "test_a_loaded_models_fetch_ops_say_what_a_run_returns_in_col_order",)),
    # the frame loop is written out three times (a call less per frame in the plain runs):
    # run_frame_ops (a driver going frame by frame), a plain recurrent_grad's drive_frames
    # and a plain recurrent's Unroll.run_all; their indents tell the first two apart
    Mutant("a frame error loses its frame", "engine/runtime/frames.py",
           "\n        raise frame_error(frames, t, step, exc) from exc",
           "\n        raise frame_error(frames, None, step, exc) from exc",
           ("tests/engine/test_run.py::"
            "test_run_frame_ops_names_the_frame_and_the_step_op_that_failed",)),
    Mutant("a plain backward frame error loses its frame", "engine/runtime/frames.py",
           "\n            raise frame_error(frames, t, step, exc) from exc",
           "\n            raise frame_error(frames, None, step, exc) from exc",
           ("tests/engine/test_runtime_mutants_frames.py::"
            "test_an_error_in_a_backward_frame_names_recurrent_grad_the_frame_and_the_grad_op",)),
    Mutant("a plain forward frame error loses its frame", "engine/recurrent/op.py",
           "raise frame_error(self, t, step, exc) from exc",
           "raise frame_error(self, None, step, exc) from exc",
           ("tests/engine/test_runtime_mutants_frames.py::"
            "test_an_error_in_a_frame_names_the_recurrent_op_the_frame_and_the_step_op",)),
    Mutant("one GPU counted as none", "engine/runtime/place.py",
           "getDeviceCount() > 0", "getDeviceCount() > 1",
           ("tests/engine/test_runtime_mutants_values.py::"
            "test_one_cuda_device_is_enough_for_a_cuda_place",)),
    # engine/autodiff and engine/kernels
    Mutant("a seeded gradient read before it is summed", "engine/autodiff/backward.py",
           "writers[n] += 1", "writers[n] += 2",
           ("tests/engine/test_autodiff_mutants_backward.py::"
            "test_a_seeded_gradient_also_written_is_summed_before_it_is_read",)),
    Mutant("an op off the gradient path ends the walk back", "engine/autodiff/backward.py",
           "if not out_grads & available:\n            continue",
           "if not out_grads & available:\n            break",
           ("tests/engine/test_autodiff_mutants_backward.py::"
            "test_an_op_off_the_gradient_path_does_not_end_the_walk_back",)),
    Mutant("sequence_reverse mirrors the wrong rows", "engine/kernels/seqplan.py",
           "(self.starts + self.ends - 1)", "(self.starts - self.ends - 1)",
           ("tests/engine/test_kernel_mutants_numerics.py::"
            "test_sequence_reverse_reverses_each_sequence_of_a_batch",)),
    # engine/recurrent and the sequence layouts
    Mutant("a debugger undo over a frame's end keeps its parameter sums", "engine/recurrent/grad.py",
           "[None if p is None else p.copy() for p in self.param_sums]",
           "[None for p in self.param_sums]",
           ("tests/engine/test_recurrent_mutants_grad_frames.py::"
            "test_stepping_back_over_a_frames_end_restores_the_parameter_sums",)),
    Mutant("batched grads ignore trans_x", "engine/recurrent/batched_grads.py",
           'return not attrs.get("trans_x") and not attrs.get("trans_y")',
           'return not attrs.get("trans_y")',
           ("tests/engine/test_recurrent_mutants_buffers.py::"
            "test_a_product_with_a_transposed_in_link_is_not_batched_and_is_right",)),
    # the shared plan cache hid this class from every sequence op's test
    Mutant("SeqPlan last rows off by one", "engine/kernels/seqplan.py",
           "self.ne_last = self.ends[self.ne_idx] - 1", "self.ne_last = self.ends[self.ne_idx]",
           ("tests/engine/test_seqplan_mutants.py::"
            "test_index_arrays_of_a_plan_with_empty_and_one_row_sequences",)),
    Mutant("sequence-to-batch order not stable", "engine/kernels/seqbatch.py",
           'np.argsort(-self.lengths, kind="stable")', "np.argsort(-self.lengths)",
           ("tests/engine/test_seqbatch_mutants.py::"
            "test_many_sequences_of_equal_length_keep_their_lod_order_in_every_frame",)),
    # engine/runtime/recycle.py: the buffer-reuse ownership rule (issue #16 item 2)
    Mutant("a view of a parameter written into", "engine/runtime/recycle.py",
           "                if flags.owndata and flags.c_contiguous and flags.writeable:",
           "                if flags.owndata or flags.c_contiguous and flags.writeable:",
           ("tests/engine/test_buffer_reuse_rules.py::"
            "test_a_view_is_never_written_into_even_when_dead",)),
    Mutant("an input a later op reads written into", "engine/runtime/recycle.py",
           "or producers[0] >= pos or last_read.get(s) != pos\n                    or s in step.output_slots()):",
           "or producers[0] >= pos or last_read.get(s) != pos and s in step.output_slots()):",
           ("tests/engine/test_buffer_reuse_rules.py::"
            "test_an_input_a_later_op_reads_is_never_written_into",)),
    # widgets/canvas
    Mutant("the live loss line dropped at each debugger stop", "widgets/canvas/debug_link.py",
           'merged["loss"] = self._loss_state', 'merged["loss"] = None',
           ("tests/widgets/test_canvas_mutants_debug_link.py::"
            "test_the_live_loss_comes_from_the_last_monitor_and_stays_through_stops",)),
    Mutant("the trailing publish sleeps the wrong interval", "widgets/canvas/debug_link.py",
           "self.min_interval_s - (time.perf_counter() - self._last_publish)",
           "self.min_interval_s - (time.perf_counter() + self._last_publish)",
           ("tests/widgets/test_canvas_mutants_debug_link.py::"
            "test_the_trailing_publish_waits_out_the_rest_of_the_interval",)),
    # this test's assertion once read a set hold_sync had already cleared (it could not fail)
    Mutant("the patched view is also sent whole", "widgets/canvas/widget.py",
           'if key == "view" and getattr(self, "_patching", False):',
           'if key == "XXviewXX" and getattr(self, "_patching", False):',
           ("tests/widgets/test_canvas_view_patch.py::"
            "test_the_canvas_sends_a_patch_and_holds_the_whole_view_back",)),
    Mutant("model.py exported in the locale's encoding", "widgets/canvas/run_actions.py",
           'with open(tmp, "w", encoding="utf-8") as f:', 'with open(tmp, "w", encoding=None) as f:',
           ("tests/widgets/test_canvas_export_encoding.py",)),
]


@pytest.fixture(scope="module")
def shadow(tmp_path_factory):
    """A copy of the package and the PYTHONPATH that makes the tests import it."""
    shim = tmp_path_factory.mktemp("mutants")
    for part in ("engine", "designer", "widgets"):
        shutil.copytree(ROOT / part, shim / "fluidscope" / part,
                        ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    env = dict(os.environ, PYTHONPATH=str(shim))
    where = subprocess.run([sys.executable, "-c", "import fluidscope.engine as e; print(e.__file__)"],
                           env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(shim)), where.stdout  # the copy, not this checkout
    return shim, env


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_once_surviving_mutant_is_killed(shadow, mutant, tmp_path):
    shim, env = shadow
    target = shim / "fluidscope" / mutant.file
    original = target.read_text()
    assert original.count(mutant.old) == 1, f"{mutant.file}: the mutated text moved; update it"
    target.write_text(original.replace(mutant.old, mutant.new))
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
             f"--basetemp={tmp_path / 'run'}", *mutant.tests],
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    finally:
        target.write_text(original)
    tail = run.stdout[-2000:] + run.stderr[-1000:]
    assert run.returncode == 1 and " failed" in run.stdout, (
        f"mutant '{mutant.name}' survived (pytest exit {run.returncode}):\n{tail}")
