"""What a feed may be and what a person is told when it is not (engine/runtime/feed.py;
issue #17, a third sample of the runtime's mutants): declared sizes of 0, declared
variables no op reads, inputs nothing set, the advice for ragged rows of vectors, and a
run that ran to the end standing at its end."""
import numpy as np
import pytest

from fluidscope.engine import ExecutionError, Executor, FluidscopeError, LoDTensor, Scope
from fluidscope.engine.ir.descs import add_op, add_var, new_program
from fluidscope.engine.runtime.feed import ragged_feed_message
from fluidscope.engine.runtime.nan_guard import ENV_FLAG, flag_from_env


def _relu(x_dims=(-1, 2), extra=None):
    desc, b = new_program()
    add_var(b, "x", list(x_dims))
    add_var(b, "y", list(x_dims))
    if extra:
        add_var(b, extra, [-1, 2])
    add_op(b, "relu", {"X": ["x"]}, {"Out": ["y"]})
    return desc


def test_a_dimension_declared_zero_takes_only_zero():
    desc = _relu((0, 2))
    with pytest.raises(FluidscopeError, match=r"^feed 'x': got shape \[3, 2\], the program "
                                              r"declares \[0, 2\] \(-1 means any size\)$"):
        Executor().run(desc, feed={"x": np.ones((3, 2), np.float32)}, scope=Scope())
    y, = Executor().run(desc, feed={"x": np.ones((0, 2), np.float32)}, fetch_list=["y"],
                        scope=Scope())
    assert y.shape == (0, 2)


def test_a_declared_variable_no_op_reads_may_be_fed_and_is_ignored():
    desc = _relu(extra="unused")
    x = np.array([[-1.0, 2.0]], np.float32)
    y, = Executor().run(desc, feed={"x": x, "unused": np.ones((1, 2), np.float32)},
                        fetch_list=["y"], scope=Scope())
    np.testing.assert_array_equal(y, [[0.0, 2.0]])


def test_a_data_variable_nothing_set_is_named_with_what_to_do():
    with pytest.raises(ExecutionError) as err:
        Executor().run(_relu(), feed={}, scope=Scope())
    assert str(err.value) == ("op #0 relu reads variable 'x', which nothing has set: "
                              "feed it or compute it before this op")


def test_ragged_rows_of_vectors_are_told_to_concatenate():
    message = ragged_feed_message("emb", [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]])
    assert "different lengths [2, 1]" in message
    assert "fd.create_lod_tensor(np.concatenate(rows), [[2, 1]])" in message
    ids = ragged_feed_message("ids", [[1, 2], [3]])
    assert "fd.create_lod_tensor(rows, [[2, 1]])" in ids


def test_a_run_driven_to_the_end_stands_at_its_end():
    exe = Executor()
    run = exe.start(_relu(), {"x": np.ones((1, 2), np.float32)}, Scope())
    run.run_to_end()
    assert run.finished and run.next_step == len(run.plan.steps) == 1


def test_a_scalar_tensor_counts_as_one_row_for_its_lod():
    t = LoDTensor(np.array(5.0), [[0, 1]])
    assert t.lod() == [[0, 1]] and t.shape() == []
    with pytest.raises(FluidscopeError, match="covers 2 rows but the tensor has 1"):
        LoDTensor(np.array(5.0), [[0, 2]])


def test_a_feed_name_like_nothing_in_the_program_gets_the_list_alone():
    with pytest.raises(FluidscopeError) as err:
        Executor().run(_relu(), feed={"x": np.ones((1, 2), np.float32), "zzz": 1.0},
                       scope=Scope())
    assert str(err.value) == "feed 'zzz' is not a variable of this program; it can be fed ['x']"


def test_the_nan_flag_is_read_from_the_mapping_given_not_the_process(monkeypatch):
    monkeypatch.setenv(ENV_FLAG, "1")
    assert flag_from_env({}) is False and flag_from_env({ENV_FLAG: "off"}) is False
    monkeypatch.delenv(ENV_FLAG)
    assert flag_from_env({ENV_FLAG: "yes"}) is True and flag_from_env() is False


def test_an_empty_sequence_between_others_is_a_valid_lod():
    t = LoDTensor(np.zeros((3, 2)), [[0, 2, 2, 3]])
    assert t.recursive_sequence_lengths() == [[2, 0, 1]]
