"""Errors a user met (issue #18, item 6), each reproduced as it was met: a feed-name typo,
a ragged list fed, LoD lengths given where offsets belong, and an export from the global
scope after training in a Scope of one's own. Each message must say what to do."""
import re

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError, LoDTensor, create_lod_tensor


def _regression(optimizer=True, fresh_names=False):
    """x [N, 3], y [N, 1] -> fc -> fc -> mean square error, trained by Adam: the program
    reads 20 persistable vars besides its two data vars. Parameters are fc_0... unless
    ``fresh_names`` (names no other test's scope holds)."""
    main, start = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, start):
        if fresh_names:
            fd.unique_name.set_count("fc", 900)
        x = fd.data("x", [None, 3])
        y = fd.data("y", [None, 1])
        pred = fd.fc(fd.fc(x, size=4), size=1)
        loss = fd.mean(fd.square_error_cost(pred, y))
        if optimizer:
            fd.optimizer.Adam(0.01).minimize(loss)
    return main, start, x, y, pred, loss


def _batch(rows=2):
    return {"x": np.ones((rows, 3), np.float32), "y": np.ones((rows, 1), np.float32)}


# ------------------------------------------------------------------ feed names
def test_feed_typo_lists_only_what_can_be_fed_and_guesses_the_name():
    main, start, *_, loss = _regression()
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(start, scope=scope)
    feed = _batch()
    feed["xx"] = feed.pop("x")
    with pytest.raises(FluidscopeError) as info:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    message = str(info.value)
    assert "feed 'xx' is not a variable of this program" in message
    assert "did you mean 'x'?" in message
    assert message.endswith("it can be fed ['x', 'y']")
    assert "moment" not in message and "fc_0.w_0" not in message  # optimizer state, parameters


def test_feed_name_far_from_any_gets_no_guess():
    main, start, *_ = _regression(optimizer=False)
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(start, scope=scope)
    with pytest.raises(FluidscopeError) as info:
        exe.run(main, feed={**_batch(), "labels_batch": np.ones((2, 1), np.float32)},
                scope=scope)
    assert "did you mean" not in str(info.value)
    assert "it can be fed ['x', 'y']" in str(info.value)


def test_feeding_a_program_that_reads_no_data_says_so():
    _, start, *_ = _regression(optimizer=False)
    with pytest.raises(FluidscopeError, match="'x' is not a variable .*it reads no data to feed"):
        fd.Executor().run(start, feed={"x": np.ones((2, 3), np.float32)}, scope=fd.Scope())


# ------------------------------------------------------------------ ragged feeds
def _sequence_program():
    main, start = fd.Program(), fd.Program()
    with fd.unique_name.guard(), fd.program_guard(main, start):
        words = fd.data("words", [None, 1], dtype="int64", lod_level=1)
        pooled = fd.sequence_pool(fd.embedding(words, size=[10, 4]), "sum")
    return main, start, pooled


def test_ragged_list_feed_names_the_feed_and_how_to_make_sequences():
    main, start, pooled = _sequence_program()
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(start, scope=scope)
    rows = [[1, 2, 3], [4, 5]]
    with pytest.raises(FluidscopeError) as info:
        exe.run(main, feed={"words": rows}, fetch_list=[pooled], scope=scope)
    message = str(info.value)
    assert message.startswith("feed 'words': its rows have different lengths [3, 2]")
    assert "fd.create_lod_tensor(rows, [[3, 2]])" in message
    assert "fd.LoDTensor(np.concatenate(rows), [[0, 3, ...]])" in message
    assert "inhomogeneous" not in message  # numpy's own words are gone
    # and what it proposes runs: two sequences, each the sum of its embedded words
    got, = exe.run(main, feed={"words": fd.create_lod_tensor(rows, [[3, 2]])},
                   fetch_list=[pooled], scope=scope)
    table = np.asarray(scope.find_var("embedding_0.w_0").get_tensor())
    np.testing.assert_allclose(got.reshape(2, 4),
                               [table[[1, 2, 3]].sum(0), table[[4, 5]].sum(0)], rtol=1e-6)


def test_ragged_rows_of_vectors_propose_concatenating_them():
    main, start, *_ = _regression(optimizer=False)
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(start, scope=scope)
    rows = [np.ones((2, 3), np.float32), np.ones((1, 3), np.float32)]
    with pytest.raises(FluidscopeError,
                       match=re.escape("fd.create_lod_tensor(np.concatenate(rows), [[2, 1]])")):
        exe.run(main, feed={"x": rows, "y": np.ones((3, 1), np.float32)}, scope=scope)


def test_create_lod_tensor_takes_a_list_of_sequences_as_paddle_does():
    t = create_lod_tensor([[1, 2, 3], [4, 5]], [[3, 2]])
    assert t.shape() == [5, 1] and t.dtype == np.int64 and t.lod() == [[0, 3, 5]]
    np.testing.assert_array_equal(np.asarray(t)[:, 0], [1, 2, 3, 4, 5])
    with pytest.raises(FluidscopeError, match=r"lengths \[3, 2\] but recursive_seq_lens is "
                                              r"\[\[2, 3\]\]; pass \[\[3, 2\]\]"):
        create_lod_tensor([[1, 2, 3], [4, 5]], [[2, 3]])


# ------------------------------------------------------------------ LoD lengths
def test_lod_lengths_given_as_offsets_say_offsets_and_create_lod_tensor():
    with pytest.raises(FluidscopeError) as info:
        LoDTensor(np.ones((7, 3), np.float32), [[3, 4]])
    message = str(info.value)
    assert message.startswith("LoDTensor: LoD level 0 [3, 4] must start at 0")
    assert "[[3, 4]] reads as sequence lengths (they add up to 7 rows)" in message
    assert "a LoD holds offsets: here [[0, 3, 7]]" in message
    assert "create_lod_tensor(array, [[3, 4]])" in message
    # the offsets it names are right
    offsets = LoDTensor(np.ones((7, 3), np.float32), [[0, 3, 7]])
    assert offsets.recursive_sequence_lengths() == [[3, 4]]


def test_lengths_that_happen_to_start_at_zero_are_caught_by_their_sum():
    # [0, 3, 4] is non-decreasing offsets ending at 4, but 7 rows: as lengths it sums to 7
    with pytest.raises(FluidscopeError, match=re.escape("here [[0, 0, 3, 7]]")):
        LoDTensor(np.ones((7, 1)), [[0, 3, 4]])


def test_two_level_lengths_are_recognised_level_by_level():
    with pytest.raises(FluidscopeError, match=re.escape("here [[0, 2, 3], [0, 3, 5, 7]]")):
        LoDTensor(np.ones((7, 1)), [[2, 1], [3, 2, 2]])


def test_bad_offsets_that_are_not_lengths_get_no_lengths_hint():
    with pytest.raises(FluidscopeError) as info:
        LoDTensor(np.ones((7, 1)), [[0, 3]])
    assert "covers 3 rows but the tensor has 7" in str(info.value)
    assert "lengths" not in str(info.value)


def test_lengths_fed_as_a_lod_name_the_feed():
    main, start, pooled = _sequence_program()
    exe, scope = fd.Executor(), fd.Scope()
    exe.run(start, scope=scope)
    tensor = LoDTensor(np.arange(5, dtype=np.int64).reshape(5, 1))
    tensor._lod = [[3, 2]]  # as a value arriving from elsewhere, unchecked
    with pytest.raises(FluidscopeError, match=r"feed 'words': .*here \[\[0, 3, 5\]\]"):
        exe.run(main, feed={"words": tensor}, fetch_list=[pooled], scope=scope)


# ------------------------------------------------------------------ export scope
def test_export_after_training_in_a_custom_scope_names_that_scope(tmp_path, monkeypatch):
    import sys
    main, start, x, y, pred, loss = _regression()
    exe = fd.Executor()
    scope = fd.Scope()
    exe.run(start, scope=scope)
    exe.run(main, feed=_batch(), fetch_list=[loss], scope=scope)
    # a notebook's namespace is __main__: the user named their scope train_scope
    monkeypatch.setattr(sys.modules["__main__"], "train_scope", scope, raising=False)
    with pytest.raises(FluidscopeError) as info:
        fd.io.save_inference_model(str(tmp_path / "model"), [x], [pred], exe, program=main)
    message = str(info.value)
    assert "has no value in the global scope, but another Scope holds all 4" in message
    assert "run the startup program" not in message
    assert "scope=train_scope" in message and "with scope_guard(train_scope):" in message
    assert not (tmp_path / "model.pdmodel").exists()
    # both remedies it names work, and agree
    fd.io.save_inference_model(str(tmp_path / "a"), [x], [pred], exe, program=main, scope=scope)
    with fd.scope_guard(scope):
        fd.io.save_inference_model(str(tmp_path / "b"), [x], [pred], exe, program=main)
    assert (tmp_path / "a.pdiparams").read_bytes() == (tmp_path / "b.pdiparams").read_bytes()
    fd.io.save(main, str(tmp_path / "ckpt.pdiparams"), scope=scope)
    loaded = fd.Scope()
    assert "fc_0.w_0_moment1_0" in fd.io.load(main, str(tmp_path / "ckpt.pdiparams"),
                                              scope=loaded)
    np.testing.assert_array_equal(np.asarray(loaded.find_var("fc_0.w_0").get_tensor()),
                                  np.asarray(scope.find_var("fc_0.w_0").get_tensor()))


def test_export_with_no_scope_holding_the_values_still_says_run_startup(tmp_path):
    main, start, x, y, pred, loss = _regression(fresh_names=True)
    with pytest.raises(FluidscopeError, match="no value in the scope given; run the startup"):
        fd.io.save_inference_model(str(tmp_path / "model"), [x], [pred], program=main,
                                   scope=fd.Scope())
