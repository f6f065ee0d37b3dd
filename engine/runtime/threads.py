"""How many threads numpy's BLAS may use while fluidscope runs a program.

OpenBLAS splits every matrix product over all cores. For the products of a design-sized
model (a 128 x 784 x 256 fc, a recurrent step's 32 x 128 x 512) the split saves little,
and when another process keeps a core busy the threads wait for each other: a training
loop in JupyterLab ran 10x slower (37.4 ms a step against 3.8 ms, issue #16;
``benchmarks/blas_threads.py`` measures it). The policy:

* **automatic** (the default): a run whose largest matrix product is small (fewer than
  ``SMALL_PRODUCT`` multiply-adds, measured on the plan's first run from the shapes it
  saw) runs at one BLAS thread, and the library's own count is back when the run ends;
  a program with a larger product runs with the library's count (a big convolution
  gains from every core). The first run of a plan, before anything is measured, runs
  with the library's count. The switch costs two calls into the BLAS library per run.
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


def largest_product(plan, vals):
    """The multiply-adds of the largest matrix product (or convolution) among ``plan``'s
    steps, from the values ``vals`` holds after a run (0 when there is none)."""
    largest = 0
    for step in plan.steps:
        slots = _PRODUCTS.get(step.type)
        if slots is None:
            continue
        names = [s.name for s in step.opdef.inputs]
        a, b = (vals[step.ins[names.index(s)]] if s in names else None for s in slots)
        if getattr(a, "ndim", 0) < 1 or getattr(b, "ndim", 0) < 1:
            continue
        if slots[0] == "X":  # rows of X times all of Y (its inner dim is X's last)
            work = (a.size // max(a.shape[-1], 1)) * b.size
        else:  # every output position reads one filter window per output channel
            work = a.size * b.size // max(a.shape[1] if a.ndim > 1 else 1, 1)
        largest = max(largest, int(work))
    return largest


class RunThreads:
    """``enter(plan)`` before a run and ``leave()`` after it: one BLAS thread for a plan
    measured small under the automatic policy, else nothing."""
    __slots__ = ("saved",)

    def __init__(self):
        self.saved = None

    def enter(self, plan):
        if _POLICY.explicit is not None or not plan.small_products:
            return
        pools = _POLICY.blas()
        if pools:
            counts = []  # a plain loop: this runs on every run of a small plan
            for p in pools:
                counts.append(p.get_num_threads())
            if counts.count(1) != len(counts):  # all at one: nothing to switch or give back
                self.saved = counts
                for p in pools:
                    p.set_num_threads(1)

    def leave(self):
        if self.saved is not None:
            for pool, count in zip(_POLICY.pools, self.saved):
                pool.set_num_threads(count)
            self.saved = None


def measure(plan, vals):
    """After a plan's first run: note whether its products are small (the policy's input)."""
    if plan.small_products is None:
        plan.small_products = largest_product(plan, vals) < SMALL_PRODUCT


__all__ = ["set_num_threads", "get_num_threads", "largest_product", "RunThreads", "measure",
           "SMALL_PRODUCT"]
