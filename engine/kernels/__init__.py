"""Kernel families. Importing this package registers every op in the registry."""
from . import elementwise, init, io, reduce  # noqa: F401  (registration side effects)
