"""Places: where tensors live and which array module (``xp``) kernels get."""
import numpy as np

from ..errors import FluidscopeError


class CPUPlace:
    """Host memory; kernels get ``xp = numpy``."""
    device = "cpu"
    xp = np

    def __repr__(self):
        return "CPUPlace()"

    def __eq__(self, other):
        return isinstance(other, CPUPlace)

    def __hash__(self):
        return hash("cpu")


def _cupy():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:  # no cupy, no driver or no device: all mean "no GPU here"
        return None
    return None


def cuda_available() -> bool:
    """True when cupy is importable and sees at least one CUDA device."""
    return _cupy() is not None


class CUDAPlace:
    """GPU ``device_id``; kernels get ``xp = cupy``. Needs cupy and a visible device."""
    device = "gpu"

    def __init__(self, device_id=0):
        cupy = _cupy()
        if cupy is None:
            raise FluidscopeError(
                "CUDAPlace needs cupy and a CUDA device; install fluidscope[gpu] on a GPU "
                "machine, or use CPUPlace()")
        self.device_id = device_id
        self.xp = cupy

    def __repr__(self):
        return f"CUDAPlace({self.device_id})"

    def __eq__(self, other):
        return isinstance(other, CUDAPlace) and other.device_id == self.device_id

    def __hash__(self):
        return hash(("gpu", self.device_id))


def to_host(array):
    """Any array (numpy or cupy) -> numpy array."""
    if array is None or isinstance(array, np.ndarray):
        return array
    get = getattr(array, "get", None)
    return get() if get is not None else np.asarray(array)
