"""The runtime's value holders, exactly (issue #17: mutants of scope.py, tensor.py, place.py
and nan_guard.py the executor tests let through): a scope keeps what it holds, a LoDTensor's
small methods, places and the copy to the host of a device array, and which arrays the NaN
guard looks into."""
import sys
import types

import numpy as np
import pytest

import fluidscope.designer as fd
from fluidscope.engine import FluidscopeError, LoDTensor, Scope, create_lod_tensor
from fluidscope.engine.runtime import place as places
from fluidscope.engine.runtime.nan_guard import count_non_finite, non_finite


# ------------------------------------------------------------------------- Scope
def test_a_scope_hands_out_one_variable_per_name_and_keeps_its_value():
    scope = Scope()
    w = scope.var("w")
    assert w.name == "w"
    w.get_tensor().set(np.arange(3.0))
    again = scope.var("w")
    assert again is w
    np.testing.assert_array_equal(np.array(again.get_tensor()), [0.0, 1.0, 2.0])


def test_a_name_is_in_a_scope_when_it_or_an_ancestor_holds_it():
    root = Scope()
    root.var("w")
    kid = root.new_scope()
    assert "w" in kid and "w" in root and "t" not in kid


def test_find_local_var_looks_only_in_this_scope():
    root = Scope()
    root.var("w")
    kid = root.new_scope()
    kid.var("t")
    assert kid.find_local_var("t") is kid.find_var("t") is not None
    assert kid.find_local_var("w") is None and kid.find_var("w") is root.find_local_var("w")


def test_erase_drops_the_names_it_holds_and_ignores_the_others():
    scope = Scope()
    scope.var("a")
    scope.var("b")
    scope.erase(["a", "never_made"])
    assert scope.local_var_names() == ["b"]


def test_a_deleted_kid_scope_is_gone_and_deleting_it_again_is_harmless():
    root = Scope()
    kid, other = root.new_scope(), root.new_scope()
    root.delete_scope(kid)
    assert root.kids() == [other]
    root.delete_scope(kid)
    assert root.kids() == [other]


def test_a_variable_holds_any_runtime_value_it_is_given():
    var = Scope().var("steps")
    holder = object()
    var.set_value(holder)
    assert var.get_value() is holder and var.is_initialized()


def test_name_in_main_without_a_main_module_is_none(monkeypatch):
    from fluidscope.engine.runtime.scope import name_in_main
    monkeypatch.delitem(sys.modules, "__main__")
    assert name_in_main(Scope()) is None


# --------------------------------------------------------------------- LoDTensor
def test_check_lod_without_a_name_calls_it_tensor():
    from fluidscope.engine.runtime.tensor import check_lod
    with pytest.raises(FluidscopeError, match=r"^tensor: LoD \[\[0, 2\]\] covers 2 rows but "
                                              r"the tensor has 3$"):
        check_lod([[0, 2]], 3)


def test_an_empty_tensor_has_no_shape_says_so_and_refuses_to_be_read():
    t = LoDTensor()
    assert t.shape() == [] and t.dtype is None
    assert repr(t) == "LoDTensor(<empty>)"
    with pytest.raises(FluidscopeError, match="^this tensor holds no value yet$"):
        t.numpy()


def test_a_tensors_repr_shows_shape_dtype_lod_and_place():
    t = LoDTensor(np.zeros((3, 2), np.float32), [[0, 1, 3]])
    assert repr(t) == "LoDTensor(shape=[3, 2], dtype=float32, lod=[[0, 1, 3]], place=CPUPlace())"


def test_wrap_keeps_the_array_itself_and_its_lod():
    value = np.zeros((3, 2))
    t = LoDTensor.wrap(value, [(0, 1, 3)])
    assert t.value is value and t.lod() == [[0, 1, 3]]
    assert LoDTensor.wrap(value).lod() == []


def test_valid_recursive_sequence_lengths_are_told_from_invalid_ones():
    t = LoDTensor(np.zeros((3, 2)), [[0, 1, 3]])
    assert t.has_valid_recursive_sequence_lengths() is True
    t.assign(t.value, [[0, 1, 2]], t.place)  # the runtime writes LoD unchecked
    assert t.has_valid_recursive_sequence_lengths() is False
    assert LoDTensor().has_valid_recursive_sequence_lengths() is False


def test_create_lod_tensor_from_a_lod_tensor_takes_its_values_and_the_new_lengths():
    old = LoDTensor(np.arange(6.0).reshape(3, 2), [[0, 3]])
    new = create_lod_tensor(old, [[2, 1]])
    np.testing.assert_array_equal(new.numpy(), old.numpy())
    assert new.lod() == [[0, 2, 3]] and old.lod() == [[0, 3]]


def test_two_levels_of_lengths_given_as_offsets_get_the_lengths_hint():
    # [[0, 2], [1, 1]] reads as lengths: one empty sequence, one of two 1-row subsequences
    with pytest.raises(FluidscopeError) as err:
        LoDTensor(np.zeros((2, 1)), [[0, 2], [1, 1]])
    assert str(err.value) == (
        "LoDTensor: LoD level 0 ends at 2 but level 1 has 1 sequences. [[0, 2], [1, 1]] reads "
        "as sequence lengths (they add up to 2 rows), but a LoD holds offsets: here "
        "[[0, 0, 2], [0, 1, 2]]; or give the lengths to create_lod_tensor(array, "
        "[[0, 2], [1, 1]]) (or set_recursive_sequence_lengths)")


def test_an_empty_lod_level_is_refused_with_the_offsets_meant():
    with pytest.raises(FluidscopeError) as err:
        LoDTensor(np.zeros((0, 2)), [[]])
    assert str(err.value).startswith(
        "LoDTensor: LoD level 0 [] must start at 0 and never decrease. [[]] reads as sequence "
        "lengths (they add up to 0 rows), but a LoD holds offsets: here [[0]]")


# ------------------------------------------------------------------------ places
def _fake_cupy(devices):
    """A stand-in for cupy seeing ``devices`` CUDA devices (cupy's own API names)."""
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=lambda: devices))
    return cupy


def test_one_cuda_device_is_enough_for_a_cuda_place(monkeypatch):
    cupy = _fake_cupy(1)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert places.cuda_available() is True
    gpu = places.CUDAPlace(1)
    assert gpu.xp is cupy and gpu.device_id == 1 and repr(gpu) == "CUDAPlace(1)"
    assert gpu == places.CUDAPlace(1) and gpu != places.CUDAPlace(0)
    assert hash(gpu) == hash(places.CUDAPlace(1))


@pytest.mark.parametrize("cupy", [None, "no devices"])
def test_without_cupy_or_a_device_a_cuda_place_says_what_to_install(monkeypatch, cupy):
    # sys.modules[name] = None makes ``import cupy`` fail as on a machine without it
    monkeypatch.setitem(sys.modules, "cupy", None if cupy is None else _fake_cupy(0))
    assert places.cuda_available() is False
    with pytest.raises(FluidscopeError) as err:
        places.CUDAPlace()
    assert str(err.value) == ("CUDAPlace needs cupy and a CUDA device; install fluidscope[gpu] "
                              "on a GPU machine, or use CPUPlace()")


class _DeviceArray:
    """Like a cupy array: ``get()`` copies it to the host; numpy may not convert it."""

    def __init__(self, host):
        self.host = host

    def get(self):
        return self.host.copy()

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed")


def test_to_host_copies_a_device_array_and_passes_host_arrays_and_none():
    host = np.arange(4.0)
    np.testing.assert_array_equal(places.to_host(_DeviceArray(host)), host)
    assert places.to_host(host) is host
    assert places.to_host(None) is None
    np.testing.assert_array_equal(places.to_host([1, 2]), [1, 2])


# ---------------------------------------------------------------- the NaN guard
def test_arrays_that_are_not_numbers_are_not_checked_for_nan():
    assert count_non_finite(np, np.array(["a", "nan"])) is None
    assert count_non_finite(np, np.array([None, 1.0], dtype=object)) is None
    assert non_finite(np, "words", np.array(["inf"])) is None
    assert non_finite(np, "x", np.array([np.nan, 1.0, np.inf])) == (
        "'x', which holds 1 NaN and 1 Inf among 3 values")


def test_a_run_on_a_gpu_place_gives_lod_tensors_on_that_place(monkeypatch):
    # cupy's array API is numpy's: a stand-in delegating to numpy runs the kernels
    cupy = _fake_cupy(1)
    cupy.__getattr__ = lambda name: getattr(np, name)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    gpu = places.CUDAPlace(0)
    main, startup = fd.Program(), fd.Program()
    with fd.program_guard(main, startup):
        y = fd.relu(fd.data("x", [None, 2], dtype="float32"))
    x = np.array([[-1.0, 2.0]], np.float32)
    t, = fd.Executor(gpu).run(main, feed={"x": x}, fetch_list=[y], scope=Scope(),
                              return_numpy=False)
    assert t.place == gpu and t.place != places.CPUPlace()
    np.testing.assert_array_equal(t.numpy(), [[0.0, 2.0]])


def test_tensors_made_for_a_gpu_place_keep_it(monkeypatch):
    cupy = _fake_cupy(1)
    cupy.__getattr__ = lambda name: getattr(np, name)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    gpu = places.CUDAPlace(0)
    made = create_lod_tensor(np.ones((3, 1)), [[1, 2]], place=gpu)
    assert made.place == gpu and made.lod() == [[0, 1, 3]]
    view = LoDTensor.wrap(np.ones((3, 1)), [[0, 3]], place=gpu)
    assert view.place == gpu
