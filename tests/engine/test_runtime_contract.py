"""engine/runtime's small contracts, exactly (issue #17: mutants the executor tests let
through): LoD checks and their words, LoDTensor as a numpy array of the dtype asked, the
non-finite counts the NaN guard reports, the ragged-feed advice, the scopes that hold
what a run looked for."""
import numpy as np
import pytest

from fluidscope.engine import FluidscopeError, LoDTensor
from fluidscope.engine.runtime import scope as sc
from fluidscope.engine.runtime.feed import ragged_feed_message
from fluidscope.engine.runtime.nan_guard import count_non_finite


def test_lod_levels_must_chain_and_an_empty_batch_is_a_lod():
    assert LoDTensor(np.zeros((0, 2)), [[0]]).lod() == [[0]]  # no sequence at all
    assert LoDTensor(np.zeros((4, 2)), [[0, 1, 3], [0, 1, 2, 4]]).lod() == [[0, 1, 3],
                                                                            [0, 1, 2, 4]]
    with pytest.raises(FluidscopeError) as err:
        LoDTensor(np.zeros((4, 2)), [[0, 1, 2], [0, 1, 2, 4]])
    assert str(err.value) == "LoDTensor: LoD level 0 ends at 2 but level 1 has 3 sequences"


def test_a_lod_tensor_reads_as_an_array_of_the_dtype_asked():
    t = LoDTensor(np.arange(6, dtype=np.float64).reshape(3, 2), [[0, 1, 3]])
    assert np.asarray(t).dtype == np.float64
    as32 = np.asarray(t, dtype=np.float32)
    assert as32.dtype == np.float32
    np.testing.assert_array_equal(as32, np.arange(6).reshape(3, 2))


def test_non_finite_counts_of_float_complex_one_element_and_other_arrays():
    assert count_non_finite(np, np.array([np.nan])) == (1, 0)  # a one-element array counts
    assert count_non_finite(np, np.array([1.0, np.inf, np.nan, -np.inf])) == (1, 2)
    assert count_non_finite(np, np.array([1 + 0j, complex(np.inf, 0)])) == (0, 1)
    assert count_non_finite(np, np.array([1.0, 2.0])) is None
    assert count_non_finite(np, np.zeros((0, 3))) is None
    assert count_non_finite(np, np.array([1, 2])) is None  # ints hold no NaN
    assert count_non_finite(np, object()) is None


def test_ragged_feed_advice_lists_at_most_eight_lengths():
    nine = ragged_feed_message("ids", [[1, 2]] * 8 + [[1]])
    assert "different lengths [2, 2, 2, 2, 2, 2, 2, 2, ...]" in nine
    eight = ragged_feed_message("ids", [[1, 2]] * 7 + [[1]])
    assert "different lengths [2, 2, 2, 2, 2, 2, 2, 1]," in eight
    mixed = ragged_feed_message("x", [[1.0, 2.0], 3.0])  # a bare number counts as length 1
    assert "different lengths [2, 1]" in mixed and "np.concatenate(rows)" in mixed


def test_scopes_holding_skips_the_scope_asked_about_and_its_parents():
    holder, other = sc.Scope(), sc.Scope()
    holder.var("w").get_tensor().set(np.ones(2))
    other.var("w").get_tensor().set(np.ones(2))
    child = holder.new_scope()
    found = sc.scopes_holding(["w"], child)
    assert holder not in found and other in found  # the child's parent is skipped too
    assert holder in sc.scopes_holding(["w"], other)
    assert other not in sc.scopes_holding(["w", "absent"], child)  # it must hold every name


def test_a_float32_lod_tensor_stays_float32_as_an_array():
    t = LoDTensor(np.ones((2, 2), np.float32), [[0, 2]])
    assert np.asarray(t).dtype == np.float32


def test_name_in_main_finds_a_public_binding_or_none(monkeypatch):
    import sys
    import types
    main = types.ModuleType("__main__")
    scope, hidden = sc.Scope(), sc.Scope()
    main.train_scope, main._private = scope, hidden
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert sc.name_in_main(scope) == "train_scope"
    assert sc.name_in_main(hidden) is None  # a _private name is not offered
    assert sc.name_in_main(object()) is None
