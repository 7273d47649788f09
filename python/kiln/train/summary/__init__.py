"""mindspore.train.summary: SummaryRecord, writing TensorBoard event files (see docs/summaries.md)."""
from .summary_record import SummaryRecord

__all__ = ["SummaryRecord"]
