"""``SummaryView``: ``fd.summary(program)`` as a table in a notebook (layers, output shapes,
parameters, bytes, MACs, totals), thin over ``designer.summary.ModelSummary``."""
from .view import SummaryView

__all__ = ["SummaryView"]
