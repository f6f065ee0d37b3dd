"""How many threads numpy's BLAS may use while fluidscope runs a program.

OpenBLAS splits every matrix product over all cores. For the products of a design-sized
model (a 128 x 784 x 256 fc, a recurrent step's 32 x 128 x 512) the split saves little,
and when another process keeps a core busy the threads wait for each other: a training
loop in JupyterLab ran 10x slower (37.4 ms a step against 3.8 ms, issue #16;
``benchmarks/blas_threads.py`` measures it). The policy:

* **automatic** (the default): a run whose largest matrix product is small (fewer than
  ``SMALL_PRODUCT`` multiply-adds) runs at one BLAS thread, and the library's own count
  is back when the run ends; a program with a larger product runs with the library's
  count (a big convolution gains from every core). The switch costs two calls into the
  BLAS library per run. The choice is made once per plan, *before* its first run
  (``decide``): from the fed arrays and the parameters, and the declared shapes of what
  the run will compute, a declared -1 read as the feed's batch. Deciding after the first
  run would run that one at another thread count than the rest, and OpenBLAS splits a
  product's sums differently per thread count: the debugger stepping a program after a
  run would then not reproduce the run's numbers bit for bit.
* ``set_num_threads(n)``: the user decides: every BLAS pool is capped at ``n`` for the
  whole process (numpy used outside fluidscope too) and the automatic policy is off;
  ``set_num_threads(None)`` gives the pools back their count from before and turns the
  automatic policy on again. ``get_num_threads()`` reads the current count.

``Executor.run`` (and so ``train``, which runs each batch through it) and the debugger's
steps (``Run.step``) follow the policy. It goes through ``threadpoolctl`` (a dependency of
fluidscope); where it is missing anyway (a hand-made environment) fluidscope leaves the
pools alone and ``set_num_threads`` raises an error that says so.
"""
from __future__ import annotations

from ..errors import FluidscopeError

SMALL_PRODUCT = 1 << 27  # multiply-adds (134M: ~2 ms at one thread of a 2020s core)

# op type -> (input slots of the two operands) whose product the policy measures
_PRODUCTS = {"mul": ("X", "Y"), "matmul_v2": ("X", "Y"), "matmul": ("X", "Y"),
             "mul_grad": ("X", "Y"), "matmul_v2_grad": ("X", "Y"),
             "conv2d": ("Input", "Filter"), "conv2d_grad": ("Input", "Filter"),
             "depthwise_conv2d": ("Input", "Filter"), "conv3d": ("Input", "Filter")}


class _Policy:
    """Process-wide state: the BLAS pools (found on first use) and the user's choice."""

    def __init__(self):
        self.pools = None       # threadpoolctl LibControllers of the BLAS libraries
        self.explicit = None    # set_num_threads(n): n; None: automatic
        self.original = None    # the pools' counts before set_num_threads
        self.readers = ()       # (pools, their count readers): see count_readers

    def count_readers(self):
        """Per BLAS pool, a function of no arguments returning its thread count, as
        ``pool.get_num_threads()`` does. Every run of a small plan asks (``RunThreads``),
        and threadpoolctl finds the library's symbol by name on each call: for OpenBLAS
        (its pthreads build) the symbol it would call is taken once and called directly
        (a fifth of the time; ~6 us of an MLP step went to that query). Kept per list of
        pools, so a policy whose pools are replaced finds them again."""
        pools = self.blas()
        kept = self.readers
        if kept and kept[0] is pools:
            return kept[1]
        readers = tuple(_count_reader(p) for p in pools)
        self.readers = (pools, readers)
        return readers

    def blas(self):
        if self.pools is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self.pools = []
            else:
                self.pools = [c for c in ThreadpoolController().lib_controllers
                              if c.user_api == "blas"]
        return self.pools


_POLICY = _Policy()


def _count_reader(pool):
    """``pool.get_num_threads`` or, for an OpenBLAS pool threaded by pthreads, the
    library function that method calls (threadpoolctl's ``_get_symbol``: where a version
    lacks it, or the two disagree, the method itself)."""
    method = pool.get_num_threads
    find = getattr(pool, "_get_symbol", None)
    if (type(pool).__name__ != "OpenBLASController" or find is None
            or getattr(pool, "threading_layer", None) == "openmp"):
        return method
    try:
        direct = find("openblas_get_num_threads")
        agrees = direct is not None and direct() == method()
    except Exception:  # noqa: BLE001 (another threadpoolctl: its method stays right)
        return method
    return direct if agrees else method


def set_num_threads(n):
    """Cap numpy's BLAS at ``n`` threads for the whole process (None: back to the
    automatic policy and the count from before). Returns the count before the call."""
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise FluidscopeError(f"set_num_threads: n must be a positive int or None, got {n!r}")
    pools = _POLICY.blas()
    if not pools:
        raise FluidscopeError(
            "set_num_threads: threadpoolctl is not installed (pip install threadpoolctl), or "
            "numpy loaded no BLAS library it knows; set OPENBLAS_NUM_THREADS before "
            "starting Python instead")
    before = get_num_threads()
    if _POLICY.original is None:
        _POLICY.original = [p.get_num_threads() for p in pools]
    if n is None:
        for pool, count in zip(pools, _POLICY.original):
            pool.set_num_threads(count)
        _POLICY.original = None
    else:
        for pool in pools:
            pool.set_num_threads(n)
    _POLICY.explicit = n
    return before


def get_num_threads():
    """The thread count of numpy's (first) BLAS library now; None when unknown."""
    pools = _POLICY.blas()
    return pools[0].get_num_threads() if pools else None


def largest_product(plan, vals, batch=None):
    """The multiply-adds of the largest matrix product (or convolution) among ``plan``'s
    steps, from the values ``vals`` holds (0 when there is none). An operand no step has
    computed yet counts nothing, or, given the feed's ``batch``, counts with its declared
    shape (-1 read as ``batch``)."""
    largest = 0
    for step in plan.steps:
        slots = _PRODUCTS.get(step.type)
        if slots is None:
            continue
        names = [s.name for s in step.opdef.inputs]
        a, b = (_operand_shape(plan, vals, step.ins[names.index(s)], batch) if s in names
                else None for s in slots)
        if not a or not b:
            continue
        size_a, size_b = _size(a), _size(b)
        if slots[0] == "X":  # rows of X times all of Y (its inner dim is X's last)
            work = (size_a // max(a[-1], 1)) * size_b
        else:  # every output position reads one filter window per output channel
            work = size_a * size_b // max(a[1] if len(a) > 1 else 1, 1)
        largest = max(largest, int(work))
    return largest


def _operand_shape(plan, vals, slot, batch):
    """The shape of ``vals[slot]``; where it holds no array yet, its declared shape when
    ``batch`` is given (else None)."""
    value = vals[slot] if isinstance(slot, int) else None
    if getattr(value, "ndim", 0) >= 1:
        return value.shape
    if batch is None or not isinstance(slot, int) or not slot:
        return None
    dims = plan.declared_dims(plan.names[slot])
    return tuple(batch if d < 0 else d for d in dims) if dims else None


def _size(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


class RunThreads:
    """``enter(plan)`` before a run and ``leave()`` after it: one BLAS thread for a plan
    measured small under the automatic policy, else nothing."""
    __slots__ = ("saved",)

    def __init__(self):
        self.saved = None

    def enter(self, plan):
        if _POLICY.explicit is not None or not plan.small_products:
            return
        readers = _POLICY.count_readers()
        if readers:
            counts = []  # a plain loop: this runs on every run of a small plan
            for read in readers:
                counts.append(read())
            if counts.count(1) != len(counts):  # all at one: nothing to switch or give back
                self.saved = counts
                for p in _POLICY.pools:
                    p.set_num_threads(1)

    def leave(self):
        if self.saved is not None:
            for pool, count in zip(_POLICY.pools, self.saved):
                pool.set_num_threads(count)
            self.saved = None


def decide(plan, vals):
    """Before a plan's first run, with its feeds and parameters bound in ``vals``: note
    whether its products are small (the policy's input), for this run and every later one."""
    if plan.small_products is None:
        batch = 1
        for slot, _ in plan.inputs:  # the feed's batch: the largest leading dim read
            value = vals[slot]
            if getattr(value, "ndim", 0) >= 1 and not plan.is_persistable(plan.names[slot]):
                batch = max(batch, int(value.shape[0]))
        plan.small_products = largest_product(plan, vals, batch) < SMALL_PRODUCT
